package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/syncbuf"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestParseArgs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		wantPos  []string
		wantFlag string
	}{
		{name: "flags first", args: []string{"--position", "1:2", "chat"}, wantPos: []string{"chat"}, wantFlag: "1:2"},
		{name: "flags after", args: []string{"chat", "--position", "1:2"}, wantPos: []string{"chat"}, wantFlag: "1:2"},
		{name: "interleaved", args: []string{"chat", "--position=3:4", "msg"}, wantPos: []string{"chat", "msg"}, wantFlag: "3:4"},
		{name: "dash is positional", args: []string{"chat", "-"}, wantPos: []string{"chat", "-"}},
		{name: "double dash ends flags", args: []string{"chat", "--", "-5", "--position"}, wantPos: []string{"chat", "-5", "--position"}},
		{name: "none", args: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			p := fs.String("position", "", "")
			got, err := parseArgs(fs, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.wantPos) || *p != tt.wantFlag {
				t.Errorf("parseArgs(%q) = %q, --position %q; want %q, %q", tt.args, got, *p, tt.wantPos, tt.wantFlag)
			}
		})
	}
}

func TestParseMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		asString bool
		want     any
		bad      bool
	}{
		{name: "object", in: `{"text":"hi"}`, want: map[string]any{"text": "hi"}},
		{name: "big integer keeps precision", in: `9007199254740993`, want: int64(9007199254740993)},
		{name: "float", in: `1.5`, want: 1.5},
		{name: "json string", in: `"quoted"`, want: "quoted"},
		{name: "null", in: `null`, want: nil},
		{name: "plain text is refused", in: `hello world`, bad: true},
		{name: "broken json is refused", in: `{bad json`, bad: true},
		{name: "two values are refused", in: `1 2`, bad: true},
		{name: "--string sends text", in: `{bad json`, asString: true, want: `{bad json`},
		{name: "--string sends JSON text as text", in: `{"a":1}`, asString: true, want: `{"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMessage(tt.in, tt.asString)
			if tt.bad {
				if err == nil || !strings.Contains(err.Error(), "--string") {
					t.Errorf("parseMessage(%q) = %#v, %v; want an error pointing at --string", tt.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseMessage(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestWriteRecord(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pos  rtm.Position
		msg  any
		want string
	}{
		{name: "message", pos: rtm.Position{Epoch: 3, Offset: 9}, msg: map[string]any{"b": int64(2), "a": "x"}, want: `{"position":"3:9","message":{"a":"x","b":2}}` + "\n"},
		{name: "binary as base64", pos: rtm.Position{Epoch: 1, Offset: 1}, msg: []byte("hi"), want: `{"position":"1:1","message":"aGk="}` + "\n"},
		{name: "nothing there", msg: nil, want: `{"position":null,"message":null}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeRecord(&b, tt.pos, tt.msg); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("writeRecord = %q, want %q", b.String(), tt.want)
			}
		})
	}
}

func TestDurationOrSeconds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     time.Duration
		bad      bool
	}{
		{name: "seconds", in: "90", want: 90 * time.Second},
		{name: "fractional seconds", in: "1.5", want: 1500 * time.Millisecond},
		{name: "duration", in: "2h", want: 2 * time.Hour},
		{name: "negative", in: "-1s", bad: true},
		{name: "junk", in: "soon", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v durationOrSeconds
			err := v.Set(tt.in)
			if (err != nil) != tt.bad || (!tt.bad && v.d != tt.want) {
				t.Errorf("Set(%q) = %v, %v; want %v, bad %v", tt.in, v.d, err, tt.want, tt.bad)
			}
		})
	}
}

func TestCLIErrorShowsCode(t *testing.T) {
	t.Parallel()
	re := rtm.Errorf(rtm.CodeAuthorizationDenied, "not allowed to publish to %q", "x")
	err := cliError(fmt.Errorf("client: publish to %q: %w", "x", re))
	if got := err.Error(); got != `authorization_denied: not allowed to publish to "x"` {
		t.Errorf("cliError text = %q", got)
	}
	if !errors.Is(err, re) {
		t.Error("cliError lost the *rtm.Error from the chain")
	}
	// Satori's fixed reasons name nothing: the CLI says what it asked.
	denied := &rtm.Error{Code: rtm.CodeAuthorizationDenied, Reason: "Unauthorized"}
	err = cliError(fmt.Errorf("client: publish to %q: %w", "x", denied))
	if got := err.Error(); got != `authorization_denied: Unauthorized (publish to "x")` {
		t.Errorf("cliError text for a fixed reason = %q", got)
	}
	if got := cliError(denied).Error(); got != "authorization_denied: Unauthorized" {
		t.Errorf("cliError text without context = %q", got)
	}
	plain := errors.New("connection refused")
	if cliError(plain) != plain || cliError(nil) != nil {
		t.Error("cliError changed an error without RTM code")
	}
}

func TestClientCommandUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{name: "pub without channel", args: []string{"pub"}},
		{name: "pub with too many args", args: []string{"pub", "a", "b", "c"}},
		{name: "sub without channel", args: []string{"sub"}},
		{name: "sub bad position", args: []string{"sub", "chat", "--position", "nope"}},
		{name: "sub bad history age", args: []string{"sub", "chat", "--history-age", "soon"}},
		{name: "read without channel", args: []string{"read"}},
		{name: "read unknown flag", args: []string{"read", "chat", "--bogus"}},
		{name: "pub bad url", args: []string{"pub", "--url", "ftp://localhost:8080", "chat", "1"}},
		{name: "pub invalid JSON", args: []string{"pub", "chat", "{bad json"}},
		{name: "pub role without secret", args: []string{"pub", "--role", "admin", "chat", "1"}},
		{name: "sub secret without role", args: []string{"sub", "--secret", "s", "chat"}},
		{name: "read role and token", args: []string{"read", "--role", "admin", "--secret", "s", "--token", "t", "chat"}},
		{name: "sub position and after", args: []string{"sub", "chat", "--position", "1:1", "--after", "1:1"}},
		// Refused here as the edge would, before dialing (no edge runs).
		{name: "pub empty channel", args: []string{"pub", "--url", "ws://127.0.0.1:1", "", `{"a":1}`}},
		{name: "sub empty channel", args: []string{"sub", "--url", "ws://127.0.0.1:1", ""}},
		{name: "read channel with a control character", args: []string{"read", "--url", "ws://127.0.0.1:1", "a\nb"}},
		{name: "token grants nothing", args: []string{"token", "--jwt-key", strings.Repeat("k", 32)}},
		{name: "token two keys", args: []string{"token", "--role", "r", "--jwt-key", "k", "--jwt-key-file", "f"}},
		{name: "token info not JSON", args: []string{"token", "--role", "r", "--jwt-key", strings.Repeat("k", 32), "--info", "{name: Ann}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			code := run(tt.args, stdio{in: strings.NewReader(""), out: &out, errw: &errw})
			if code != 2 {
				t.Errorf("exit code %d, want 2 (stderr %q)", code, errw.String())
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q, want nothing", out.String())
			}
		})
	}
}

// verifyToken checks a minted token the way an edge does.
func verifyToken(t *testing.T, key *app.JWTKey, tok string) *auth.Grant {
	t.Helper()
	a := &app.App{Key: "demo", JWT: key, Roles: map[string]*app.Role{
		"admin": {Name: "admin", Permissions: app.Permissions{Publish: []string{"*"}}},
	}}
	g, err := auth.Verify(a, tok, time.Now())
	if err != nil {
		t.Fatalf("the edge refuses the token: %v", err)
	}
	return g
}

func TestTokenVerifies(t *testing.T) {
	secret := "0123456789abcdef0123456789abcdef"
	cfgPath := filepath.Join(t.TempDir(), "sluice.yaml")
	cfg := "apps:\n  - appkey: chat-app\n    jwt_key: \"" + secret + "\"\n    roles:\n      admin: {publish: [\"*\"]}\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	// A node's config, which the edge completes with --data-dir and
	// whose route key the minter cannot read: the app's key is enough.
	nodePath := filepath.Join(t.TempDir(), "node.yaml")
	node := cfg + "cluster:\n  name: c\n  listen: 127.0.0.1:6222\n  routes: [nats-route://127.0.0.1:6222]\n" +
		"  tls: {cert_file: /nonexistent/n.pem, key_file: /nonexistent/n-key.pem, ca_file: /nonexistent/ca.pem}\n"
	if err := os.WriteFile(nodePath, []byte(node), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		env  string // SLUICE_JWT_KEY
	}{
		{name: "jwt-key flag", args: []string{"--jwt-key", secret}},
		{name: "env key", env: secret},
		{name: "config and appkey", args: []string{"--config", cfgPath, "--appkey", "chat-app"}},
		{name: "a cluster node's config", args: []string{"--config", nodePath, "--appkey", "chat-app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("SLUICE_JWT_KEY", tt.env)
			var out, errw bytes.Buffer
			args := append([]string{"--role", "admin", "--subscribe", "news,sports", "--presence", "news", "--ttl", "10m",
				"--subject", "ann", "--info", `{"name":"Ann"}`}, tt.args...)
			if err := runToken(context.Background(), args, stdio{out: &out, errw: &errw}); err != nil {
				t.Fatalf("runToken: %v (stderr %q)", err, errw.String())
			}
			g := verifyToken(t, &app.JWTKey{Secret: []byte(secret)}, strings.TrimSpace(out.String()))
			if g.Role != "admin" || g.Subject != "ann" || !reflect.DeepEqual(g.Permissions.Subscribe, []string{"news", "sports"}) ||
				!reflect.DeepEqual(g.Permissions.Presence, []string{"news"}) || !reflect.DeepEqual(g.Info, map[string]any{"name": "Ann"}) {
				t.Errorf("grant = %+v", g)
			}
			if d := time.Until(g.Expires); d <= 9*time.Minute || d > 10*time.Minute {
				t.Errorf("token expires in %v, want 10m", d)
			}
		})
	}
}

func TestTokenKeyErrors(t *testing.T) {
	t.Setenv("SLUICE_JWT_KEY", "")
	cfgPath := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(cfgPath, []byte("apps:\n  - appkey: nokey\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no key", args: nil, want: "no signing key"},
		{name: "short secret", args: []string{"--jwt-key", "short"}, want: "32 bytes"},
		{name: "app without jwt_key", args: []string{"--config", cfgPath, "--appkey", "nokey"}, want: "has no jwt_key"},
		{name: "unknown app", args: []string{"--config", cfgPath, "--appkey", "ghost"}, want: `no app "ghost"`},
		{name: "missing key file", args: []string{"--jwt-key-file", filepath.Join(t.TempDir(), "none.pem")}, want: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			err := runToken(context.Background(), append([]string{"--role", "admin"}, tt.args...), stdio{out: &out, errw: &errw})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("runToken error = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// startTestEdge serves the demo app on a loopback port.
func startTestEdge(t *testing.T) string {
	t.Helper()
	return servertest.Start(t, &server.Options{Apps: []*app.App{app.Demo()}}, nil).URL
}

// syncBuffer is a buffer a command writes to while the test reads it.
type syncBuffer struct{ syncbuf.Buffer }

// lines returns what was written, a line each.
func (s *syncBuffer) lines() []string {
	out := s.String()
	if out == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

// cmdOut runs a command to completion and returns its standard output.
func cmdOut(t *testing.T, cmd command, stdin string, args ...string) string {
	t.Helper()
	var out, errw bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cmd(ctx, args, stdio{in: strings.NewReader(stdin), out: &out, errw: &errw}); err != nil {
		t.Fatalf("%q: %v (stderr %q)", args, err, errw.String())
	}
	return out.String()
}

// TestPubSubReadAgainstEdge publishes with pub (an argument, lines of
// standard input, --string) and checks that sub prints every message with
// the very position pub printed for it, as read does.
func TestPubSubReadAgainstEdge(t *testing.T) {
	t.Setenv("SLUICE_URL", startTestEdge(t)) // the env fallback of --url
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var subOut syncBuffer
	var subErr bytes.Buffer
	subDone := make(chan error, 1)
	go func() {
		subDone <- runSub(ctx, []string{"chat", "--history-count", "10"}, stdio{out: &subOut, errw: &subErr})
	}()

	first := strings.TrimSpace(cmdOut(t, runPub, "", "chat", `{"text":"hi"}`))
	if _, err := rtm.ParsePosition(first); err != nil {
		t.Fatalf("pub printed %q, want a position", first)
	}
	positions := append([]string{first}, strings.Fields(cmdOut(t, runPub, "1\n\"quoted\"\n\n[1,2]\n", "--codec", "json", "chat", "-"))...)
	positions = append(positions, strings.TrimSpace(cmdOut(t, runPub, "", "chat", "--string", "plain {text")))
	want := []string{`{"text":"hi"}`, `1`, `"quoted"`, `[1,2]`, `"plain {text"`}
	if len(positions) != len(want) {
		t.Fatalf("pub printed %q, want %d positions", positions, len(want))
	}
	lines := waitLines(t, &subOut, len(want))
	stop()
	if err := <-subDone; err != nil {
		t.Fatalf("sub: %v (stderr %q)", err, subErr.String())
	}
	for i, line := range lines {
		if w := `{"position":"` + positions[i] + `","message":` + want[i] + `}`; line != w {
			t.Errorf("sub line %d = %s, want %s: the message at the position pub printed", i, line, w)
		}
	}

	got := cmdOut(t, runRead, "", "chat")
	if wantRead := `{"position":"` + positions[4] + `","message":"plain {text"}` + "\n"; got != wantRead {
		t.Errorf("read = %q, want %q", got, wantRead)
	}
	got = cmdOut(t, runRead, "", "chat", "--position", first)
	if wantRead := `{"position":"` + first + `","message":{"text":"hi"}}` + "\n"; got != wantRead {
		t.Errorf("read --position = %q, want %q", got, wantRead)
	}
}

// waitLines polls out until it holds n lines, or 10 s, and returns them.
func waitLines(t *testing.T, out *syncBuffer, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for len(out.lines()) < n {
		select { // poll the output until the deadline
		case <-tick.C:
		case <-deadline:
			t.Fatalf("sub printed %q, want %d lines", out.lines(), n)
		}
	}
	if lines := out.lines(); len(lines) != n {
		t.Fatalf("sub printed %q, want %d lines", lines, n)
	}
	return out.lines()
}

func TestClientCommandErrors(t *testing.T) {
	url := startTestEdge(t)
	tests := []struct {
		name, want string
		args       []string
	}{
		{name: "denied", args: []string{"pub", "--url", url, "$reserved", "1"}, want: "sluice pub: authorization_denied: "},
		{name: "unknown appkey", args: []string{"read", "--url", url, "--appkey", "nope", "chat"}, want: "sluice read: invalid_appkey: "},
		{name: "no edge", args: []string{"read", "--url", "ws://127.0.0.1:1", "chat"}, want: "sluice read: client: dial"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			if code := run(tt.args, stdio{in: strings.NewReader(""), out: &out, errw: &errw}); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if !strings.HasPrefix(errw.String(), tt.want) {
				t.Errorf("stderr %q, want it to start with %q", errw.String(), tt.want)
			}
		})
	}
}

// TestSubFilter: sub --filter prints what a stream view makes of the
// channel, and --period sets an aggregate view's period.
func TestSubFilter(t *testing.T) {
	url := startTestEdge(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var viewOut, countOut syncBuffer
	var viewErr, countErr bytes.Buffer
	done := make(chan error, 2)
	go func() {
		done <- runSub(ctx, []string{"--url", url, "--id", "big", "--history-count", "10", "--filter", "SELECT n * 10 AS x FROM nums WHERE n > 1"},
			stdio{out: &viewOut, errw: &viewErr})
	}()
	go func() {
		done <- runSub(ctx, []string{"--url", url, "--id", "count", "--history-count", "10", "--period", "1", "--filter", "SELECT COUNT(*) AS c FROM nums"},
			stdio{out: &countOut, errw: &countErr})
	}()
	// With history, what is published before a subscription is made
	// still reaches it, through the view.
	var pos []string
	for i := 1; i <= 3; i++ {
		pos = append(pos, strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "nums", `{"n":`+strconv.Itoa(i)+`}`)))
	}
	lines := waitLines(t, &viewOut, 2)
	for i, want := range []string{`{"position":"` + pos[1] + `","message":{"x":20}}`, `{"position":"` + pos[2] + `","message":{"x":30}}`} {
		if lines[i] != want {
			t.Errorf("view line %d = %s, want %s", i, lines[i], want)
		}
	}
	counts := waitLines(t, &countOut, 1)
	if !strings.Contains(counts[0], `"message":{"c":`) {
		t.Errorf("aggregate line %s", counts[0])
	}
	stop()
	for range 2 {
		if err := <-done; err != nil {
			t.Fatalf("sub: %v (stderr %q %q)", err, viewErr.String(), countErr.String())
		}
	}
	var out, errw bytes.Buffer
	if code := run([]string{"sub", "--url", url, "--period", "5", "nums"}, stdio{in: strings.NewReader(""), out: &out, errw: &errw}); code != 2 ||
		!strings.Contains(errw.String(), "--period needs --filter") {
		t.Errorf("--period without --filter: exit %d, %q", code, errw.String())
	}
}

package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// subLines runs sub with args until it printed n lines and returns them.
func subLines(t *testing.T, n int, args ...string) []string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var out syncBuffer
	var errw bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- runSub(ctx, args, stdio{out: &out, errw: &errw}) }()
	lines := waitLines(t, &out, n)
	stop()
	if err := <-done; err != nil {
		t.Fatalf("sub %q: %v (stderr %q)", args, err, errw.String())
	}
	return lines
}

// TestSubAfterResumes checks the two ways to start at a position: --after
// with a printed position continues with the next message, --position
// starts at that message.
func TestSubAfterResumes(t *testing.T) {
	t.Setenv("SLUICE_URL", startTestEdge(t))
	pos := strings.Fields(cmdOut(t, runPub, "1\n2\n3\n", "chat", "-"))
	if len(pos) != 3 {
		t.Fatalf("pub printed %q, want 3 positions", pos)
	}
	line := func(i int) string { return `{"position":"` + pos[i] + `","message":` + string(rune('1'+i)) + `}` }

	if got := subLines(t, 1, "chat", "--after", pos[1]); got[0] != line(2) {
		t.Errorf("sub --after %s printed %q, want %s: the message after it", pos[1], got, line(2))
	}
	if got := subLines(t, 2, "chat", "--position", pos[1]); got[0] != line(1) || got[1] != line(2) {
		t.Errorf("sub --position %s printed %q, want %s then %s", pos[1], got, line(1), line(2))
	}
	// After the newest message: nothing yet, then what comes next.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runSub(ctx, []string{"chat", "--after", pos[2]}, stdio{out: &out, errw: &bytes.Buffer{}})
	}()
	// Published until sub prints: sub says nothing once subscribed.
	var fourth []string
	for out.lines() == nil {
		fourth = append(fourth, strings.TrimSpace(cmdOut(t, runPub, "", "chat", "4")))
		if len(fourth) > 100 {
			t.Fatal("sub --after the newest message printed nothing for 100 publishes")
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got, want := out.lines()[0], `{"position":"`+fourth[0]+`","message":4}`; got != want {
		t.Errorf("sub --after the newest printed %s first, want %s", got, want)
	}
}

// TestSubAfterExpiredNamesIt: an expired --after P is reported with P,
// the position typed, not P's offset + 1, which sub asks the edge for.
func TestSubAfterExpiredNamesIt(t *testing.T) {
	url := startTestEdge(t)
	var out, errw bytes.Buffer
	code := run([]string{"sub", "--url", url, "chat", "--after", "1:99999"}, stdio{out: &out, errw: &errw})
	want := "sluice sub: expired_position: position 1:99999 has expired or belongs to another history (sub --after 1:99999)\n"
	if code != 1 || errw.String() != want {
		t.Errorf("sub --after 1:99999 exited %d with %q, want 1 with %q", code, errw.String(), want)
	}
}

// TestPubRefusesInvalidJSON: text that is not JSON is not published as a
// string unless --string says so; on standard input, the lines before
// the bad one are published and the rest are not.
func TestPubRefusesInvalidJSON(t *testing.T) {
	url := startTestEdge(t)
	var out, errw bytes.Buffer
	if code := run([]string{"pub", "--url", url, "chat", "{bad json"}, stdio{in: strings.NewReader(""), out: &out, errw: &errw}); code != 2 {
		t.Errorf("pub '{bad json' exited %d, want 2", code)
	}
	if msg := errw.String(); strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "not a JSON value") || !strings.Contains(msg, "--string") {
		t.Errorf("pub '{bad json' said %q, want one line saying it is not JSON and naming --string", msg)
	}
	if got := cmdOut(t, runRead, "", "--url", url, "chat"); got != `{"position":null,"message":null}`+"\n" {
		t.Errorf("after the refused pub, read = %q: something was published", got)
	}

	out.Reset()
	errw.Reset()
	code := run([]string{"pub", "--url", url, "chat", "-"}, stdio{in: strings.NewReader("1\n\n{bad\n2\n"), out: &out, errw: &errw})
	if code != 1 || !strings.Contains(errw.String(), "line 3") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("pub - of a bad third line: exit %d, stdout %q, stderr %q; want 1, one position, an error naming line 3", code, out.String(), errw.String())
	}
	first := strings.TrimSpace(out.String())
	if got, want := cmdOut(t, runRead, "", "--url", url, "chat"), `{"position":"`+first+`","message":1}`+"\n"; got != want {
		t.Errorf("read = %q, want %q: only the line before the bad one published", got, want)
	}

	p := strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "--string", "chat", "{bad json"))
	if got, want := cmdOut(t, runRead, "", "--url", url, "chat"), `{"position":"`+p+`","message":"{bad json"}`+"\n"; got != want {
		t.Errorf("after pub --string, read = %q, want %q", got, want)
	}

	// --exclude-self: stored as any other (pub's connection subscribes to
	// nothing, so nobody is left out).
	p = strings.TrimSpace(cmdOut(t, runPub, "", "--url", url, "--exclude-self", "chat", `"mine"`))
	if got, want := cmdOut(t, runRead, "", "--url", url, "chat"), `{"position":"`+p+`","message":"mine"}`+"\n"; got != want {
		t.Errorf("after pub --exclude-self, read = %q, want %q", got, want)
	}
}

// TestBareHostPort: --url 127.0.0.1:PORT, as a listen address is written,
// means ws://127.0.0.1:PORT.
func TestBareHostPort(t *testing.T) {
	t.Parallel()
	bare := strings.TrimPrefix(startTestEdge(t), "ws://")
	if got := cmdOut(t, runRead, "", "--url", bare, "chat"); got != `{"position":null,"message":null}`+"\n" {
		t.Errorf("read --url %s = %q", bare, got)
	}
	if got := endpointURL("edge.example.com:443/v2"); got != "ws://edge.example.com:443/v2" {
		t.Errorf("endpointURL of a bare host:port/path = %q", got)
	}
	if got := endpointURL("wss://edge.example.com"); got != "wss://edge.example.com" {
		t.Errorf("endpointURL changed a URL with a scheme: %q", got)
	}
}

// commandsWithFlags are the subcommands that take flags.
var commandsWithFlags = []string{"edge", "pub", "sub", "read", "api", "token", "bench"}

// TestBadFlagReportedOnce: an unknown flag is one line on standard error
// naming it and pointing at -h, with exit code 2; no help text around it.
func TestBadFlagReportedOnce(t *testing.T) {
	t.Parallel()
	for _, name := range commandsWithFlags {
		t.Run(name, func(t *testing.T) {
			var out, errw bytes.Buffer
			code := run([]string{name, "--bogus"}, stdio{in: strings.NewReader(""), out: &out, errw: &errw})
			want := "sluice " + name + ": usage: flag provided but not defined: -bogus (sluice " + name + " -h lists the flags)\n"
			if code != 2 || errw.String() != want || out.Len() != 0 {
				t.Errorf("exit %d, stderr %q, stdout %q; want 2 and %q", code, errw.String(), out.String(), want)
			}
		})
	}
}

// TestHelpOneStyle: every subcommand's -h has the same shape: usage line,
// text, then its flags, on standard error, and exit 0.
func TestHelpOneStyle(t *testing.T) {
	t.Parallel()
	for _, name := range commandsWithFlags {
		t.Run(name, func(t *testing.T) {
			var out, errw bytes.Buffer
			code := run([]string{name, "-h"}, stdio{in: strings.NewReader(""), out: &out, errw: &errw})
			help := errw.String()
			usage, rest, _ := strings.Cut(help, "\n\n")
			text, flags, ok := strings.Cut(rest, "\n\nflags:\n  -")
			if code != 0 || out.Len() != 0 || !strings.HasPrefix(usage, "usage: sluice "+name+" ") || !ok || text == "" || flags == "" {
				t.Errorf("exit %d, stdout %q, help %q; want 0 and \"usage: sluice %s ...\\n\\nTEXT\\n\\nflags:\\n  -...\"", code, out.String(), help, name)
			}
			if strings.Contains(help, "Usage of") {
				t.Errorf("help in package flag's default style: %q", help)
			}
		})
	}
}

// TestAfterError: the edge's reason has the position sub asked for (P's
// offset + 1) replaced with P, and only where it is a whole position; a
// reason that does not name it (another RTM server's) is left alone.
func TestAfterError(t *testing.T) {
	typed, asked := rtm.Position{Epoch: 1, Offset: 9}, rtm.Position{Epoch: 1, Offset: 10}
	for reason, want := range map[string]string{
		"position 1:10 has expired":         "expired_position: position 1:9 has expired (sub --after 1:9)",
		"1:10 expired; oldest is 11:100":    "expired_position: 1:9 expired; oldest is 11:100 (sub --after 1:9)",
		"position 11:100 is not 1:100":      "expired_position: position 11:100 is not 1:100",
		"Position expired (Satori wording)": "expired_position: Position expired (Satori wording)",
	} {
		err := afterError(fmt.Errorf("client: subscribe: %w", rtm.Errorf(rtm.CodeExpiredPosition, "%s", reason)), typed, asked)
		if err.Error() != want {
			t.Errorf("afterError(%q) = %q, want %q", reason, err.Error(), want)
		}
		if _, ok := rtm.AsError(err); !ok {
			t.Errorf("afterError(%q) lost the *rtm.Error", reason)
		}
	}
}

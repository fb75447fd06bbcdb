package e2e

// The sluice binary, run as processes: `sluice edge`, `sluice sub`, `sluice
// pub`, its graceful shutdown and its config errors.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/syncbuf"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// The binary is built once per test run, into binDir, removed by
// cleanupBinary when the run ends.
var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// sluiceBinary returns the path of cmd/sluice built from this tree, as
// the releases and the image build it: static (no cgo), -trimpath. The
// Makefile's vet and staticcheck compile the tree that way too, so in
// `make test` this only links.
func sluiceBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, buildErr = os.MkdirTemp("", "sluice-e2e-"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "sluice")
		cmd := exec.Command("go", "build", "-trimpath", "-o", binPath, "./cmd/sluice")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Dir = ".." // the module root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("CGO_ENABLED=0 go build -trimpath ./cmd/sluice: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// cleanupBinary removes the built binary at the end of the run; goleak
// calls it with the exit code.
func cleanupBinary(code int) {
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// process is a running sluice command; the test's cleanup kills it if it
// is still running.
type process struct {
	name           string
	cmd            *exec.Cmd
	stdout, stderr syncbuf.Buffer
	done           chan struct{}
	err            error  // cmd.Wait's result, set before done is closed
	ready          string // an edge's --ready-file (launchEdge), else ""
}

// startProcess runs `sluice args...` with env added to an environment
// cleared of SLUICE_ variables.
func startProcess(t *testing.T, env []string, args ...string) *process {
	t.Helper()
	return startCommand(t, env, sluiceBinary(t), args...)
}

// startCommand runs `name args...` as startProcess does.
func startCommand(t *testing.T, env []string, name string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(name, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SLUICE_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	p := &process{name: filepath.Base(name) + " " + strings.Join(args, " "), cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.stdout, &p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s\nstdout:\n%s\nstderr:\n%s", p.name, p.stdout.String(), p.stderr.String())
		}
	})
	return p
}

// kill ends the process if it still runs, and waits for it.
func (p *process) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exitCode waits at most d for the process to exit and returns its code.
func (p *process) exitCode(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("%s still running after %v", p.name, d)
	}
	return p.cmd.ProcessState.ExitCode()
}

// signal sends sig to the process.
func (p *process) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %s: %v", p.name, err)
	}
}

// edgeProcess is `sluice edge` running on a loopback port.
type edgeProcess struct {
	*process
	url, appkey string
}

// startEdgeProcess runs `sluice edge --listen 127.0.0.1:0 args...` and
// waits until it listens.
func startEdgeProcess(t *testing.T, args ...string) *edgeProcess {
	t.Helper()
	return waitReady(t, launchEdge(t, append([]string{"--listen", "127.0.0.1:0"}, args...)...))
}

// launchEdge runs `sluice edge args... --ready-file F` without waiting
// for it: waitReady does, so that several edges start side by side.
func launchEdge(t *testing.T, args ...string) *process {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready.json")
	p := startProcess(t, nil, append(append([]string{"edge"}, args...), "--ready-file", ready)...)
	p.ready = ready
	return p
}

// waitReady waits for the ready file of an edge from launchEdge and reads
// the edge's URL and first appkey from it.
func waitReady(t *testing.T, p *process) *edgeProcess {
	t.Helper()
	var info readyfile.Info
	poll.UntilNil(t, "the edge's ready file", func() error {
		select {
		case <-p.done:
			t.Fatalf("the edge exited: %v\n%s", p.err, p.stderr.String())
		default:
		}
		var err error
		info, err = readyfile.Read(p.ready)
		return err
	})
	if len(info.AppKeys) == 0 {
		t.Fatalf("the edge serves no app: %+v", info)
	}
	return &edgeProcess{process: p, url: info.URL, appkey: info.AppKeys[0]}
}

var subRecord = regexp.MustCompile(`^\{"position":"(\d+:\d+)","message":\{"text":"hi"\}\}$`)

func TestCLIPubSub(t *testing.T) {
	t.Parallel()
	edge := startCmdEdge(t, "") // the default edge; the processes are the clients
	if edge.appkey != "demo" {
		t.Errorf("appkey %q, want demo", edge.appkey)
	}
	sub := startProcess(t, edge.env(), "sub", "chat")
	// sub says nothing once subscribed: publish until it prints, each
	// publish a process of its own.
	var published []string
	firstLine := func() string {
		line, _, ok := strings.Cut(sub.stdout.String(), "\n")
		if !ok {
			return ""
		}
		return line
	}
	deadline := time.Now().Add(20 * time.Second)
	for firstLine() == "" {
		if time.Now().After(deadline) {
			t.Fatalf("sub printed nothing after %d publishes", len(published))
		}
		pub := startProcess(t, edge.env(), "pub", "chat", `{"text":"hi"}`)
		if code := pub.exitCode(t, 20*time.Second); code != 0 {
			t.Fatalf("pub exited %d: %s", code, pub.stderr.String())
		}
		pos, err := rtm.ParsePosition(strings.TrimSpace(pub.stdout.String()))
		if err != nil {
			t.Fatalf("pub printed %q, want a position", pub.stdout.String())
		}
		published = append(published, pos.String())
		poll := time.Now().Add(300 * time.Millisecond)
		for firstLine() == "" && time.Now().Before(poll) {
			select {
			case <-sub.done:
				t.Fatalf("sub exited: %v", sub.err)
			case <-time.After(5 * time.Millisecond): // polling sub's output
			}
		}
	}
	m := subRecord.FindStringSubmatch(firstLine())
	if m == nil {
		t.Fatalf("sub printed %q, want {\"position\":\"E:O\",\"message\":{\"text\":\"hi\"}}", firstLine())
	}
	if !slices.Contains(published, m[1]) {
		t.Errorf("sub's position %s is not that of a published message (pub printed %v)", m[1], published)
	}
	sub.signal(t, os.Interrupt)
	if code := sub.exitCode(t, 10*time.Second); code != 0 {
		t.Errorf("sub exited %d on SIGINT, want 0: %s", code, sub.stderr.String())
	}
}

func TestCLIEdgeGracefulShutdown(t *testing.T) {
	t.Parallel()
	const grace = 5 * time.Second
	// No readiness delay: this edge has no load balancer to tell
	// (drain_test.go tests the delay).
	cfg := edgecmdtest.WriteConfig(t, "limits:\n  shutdown_timeout: 5s\n  drain_delay: 0s\n")
	edge := startEdgeProcess(t, "--config", cfg)
	ctx := ctxFor(t)
	ws, _, err := websocket.Dial(ctx, edge.url+"/v2?appkey="+edge.appkey, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	closed := make(chan error, 1)
	go func() {
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				closed <- err
				return
			}
		}
	}()
	var states stateLog
	c := dial(t, edge.url, client.Options{AppKey: edge.appkey, OnState: states.on})
	if _, err := c.Publish(ctx, "chat", "before shutdown"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	edge.signal(t, syscall.SIGTERM)
	err = poll.Recv(t, "the close frame", closed)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("raw client read %v, want close code 1001", err)
	}
	if code := edge.exitCode(t, grace+5*time.Second); code != 0 {
		t.Errorf("edge exited %d after SIGTERM, want 0", code)
	}
	if d := time.Since(start); d > grace {
		t.Errorf("edge took %v to exit, more than its shutdown timeout %v", d, grace)
	}
	poll.Until(t, "the client to notice", func() bool { return slices.Contains(states.get(), client.Disconnected) })
	if !strings.Contains(edge.stderr.String(), "stopped") {
		t.Errorf("edge logs lack the end of the shutdown:\n%s", edge.stderr.String())
	}
}

func TestCLIEdgeConfigUnknownKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config string
		want         []string // substrings of standard error
	}{
		{name: "top level", config: "listen: 127.0.0.1:0\nlisten_adress: x\n",
			want: []string{`unknown key "listen_adress"`, "line 2"}},
		{name: "nested", config: "listen: 127.0.0.1:0\nlimits:\n  connections: 10\n  conections: 2\n",
			want: []string{`unknown key "conections"`, "limits.conections", "line 4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := edgecmdtest.WriteConfig(t, tt.config)
			p := startProcess(t, nil, "edge", "--config", path)
			if code := p.exitCode(t, 20*time.Second); code == 0 {
				t.Fatalf("edge with an unknown key exited 0")
			}
			stderr := p.stderr.String()
			for _, w := range append(tt.want, path) {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
			if strings.Contains(p.stdout.String(), "url:") {
				t.Errorf("edge printed its banner despite the bad config: %q", p.stdout.String())
			}
		})
	}
}

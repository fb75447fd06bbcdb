package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// centrifugoModule is the peer measured, built with `go install`.
const centrifugoModule = "github.com/centrifugal/centrifugo/v6@v6.9.1"

// system is one server under test: how to start it in a topology, and
// how to reach it.
type system struct {
	name  string
	start func(ctx context.Context, o *options, topo topology) (*group, loadgen.Driver, error)
}

// topology is how a scenario deploys a system.
type topology int

const (
	// oneNode is a single server, in memory: the original scenarios.
	oneNode topology = iota
	// twoNodes is a cluster of two servers on this machine: Sluice edges
	// in one JetStream cluster, Centrifugo nodes on one Redis.
	twoNodes
	// durableNode is one Sluice edge with --data-dir (JetStream files).
	durableNode
)

// process is a server running as a child process, with the tail of its
// output kept for error messages.
type process struct {
	cmd  *exec.Cmd
	out  *tail
	done chan struct{} // closed once the process has exited
	err  error         // its exit status; valid once done is closed
}

// startProcess runs bin with args in dir and waits until health answers
// 200.
func startProcess(ctx context.Context, bin, dir, health string, args ...string) (*process, error) {
	p, err := spawn(bin, dir, args...)
	if err != nil {
		return nil, err
	}
	if err := p.waitReady(ctx, httpReady(health)); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w\n%s", filepath.Base(bin), err, p.out)
	}
	return p, nil
}

// spawn starts bin with args in dir, without waiting for it to serve (the
// nodes of a cluster must all be up before any is ready).
func spawn(bin, dir string, args ...string) (*process, error) {
	p := &process{out: &tail{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the harness
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	// The process's owner waits for this goroutine through done (stop).
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// readiness is one check that a process serves: nil once it does.
type readiness struct {
	what  string // for the error, as in a URL
	check func(ctx context.Context) error
}

// httpReady checks that url answers 200.
func httpReady(url string) readiness {
	return readiness{url, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", resp.StatusCode)
		}
		return nil
	}}
}

// waitReady polls the check until it passes, the process exits, or 60s
// pass (a JetStream cluster electing its leaders takes a few seconds).
func (p *process) waitReady(ctx context.Context, r readiness) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := r.check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before serving: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("not ready at %s (%v): %w", r.what, err, ctx.Err())
		case <-tick.C:
		}
	}
}

// pid is the process id.
func (p *process) pid() int { return p.cmd.Process.Pid }

// stop asks the process to exit (SIGTERM), kills it after 20s, and waits.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tail keeps the last 16 KiB written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - 16<<10; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// freeAddr returns a loopback address with a free port.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// buildSluice builds `sluice` from the tree at repo into dir.
func buildSluice(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "sluice")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/sluice")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build sluice in %s: %w\n%s", repo, err, out)
	}
	return bin, nil
}

// installCentrifugo builds Centrifugo once into the user's cache (a few
// minutes on two cores) and reuses it afterwards.
func installCentrifugo(ctx context.Context, logw io.Writer) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "sluice-compare", "centrifugo-v6.9.1")
	bin := filepath.Join(dir, "centrifugo")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	fmt.Fprintf(logw, "building %s into %s (once; takes minutes)\n", centrifugoModule, dir)
	cmd := exec.CommandContext(ctx, "go", "install", centrifugoModule)
	cmd.Env = append(os.Environ(), "GOBIN="+dir)
	cmd.Dir = os.TempDir() // outside any module, so its own go.mod rules
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", centrifugoModule, err, out)
	}
	return bin, nil
}

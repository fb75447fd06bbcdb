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
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/wasm/client"
	"github.com/sluicehq/sluice/wasm/loadgen"
)

// centrifugoModule is the peer measured, built with `go install`.
const centrifugoModule = "github.com/centrifugal/centrifugo/v6@v6.9.1"

// system is one server under test: how to start it, and how to reach it.
type system struct {
	name  string
	start func(ctx context.Context, o *options) (*process, loadgen.Driver, error)
}

// process is a server running as a child process, with the tail of its
// output kept for error messages.
type process struct {
	cmd   *exec.Cmd
	out   *tail
	done  chan struct{} // closed once the process has exited
	err   error         // its exit status; valid once done is closed
	admin string        // base URL of its pprof handler, "" for none
}

// startProcess runs bin with args in dir and waits until health answers
// 200.
func startProcess(ctx context.Context, bin, dir, health string, args ...string) (*process, error) {
	p := &process{out: &tail{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the harness
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	if err := p.waitHealthy(ctx, health); err != nil {
		p.stop()
		return nil, fmt.Errorf("%s: %w\n%s", filepath.Base(bin), err, p.out)
	}
	return p, nil
}

// waitHealthy polls the health URL until it answers 200, the process
// exits, or 60s pass.
func (p *process) waitHealthy(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("exited before serving: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("not healthy at %s: %w", url, ctx.Err())
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

// sluiceSystem runs `sluice edge` with limits raised for benchmarking.
func sluiceSystem() system {
	return system{name: "sluice", start: func(ctx context.Context, o *options) (*process, loadgen.Driver, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		cfg := fmt.Sprintf("listen: %s\nlimits:\n  requests_per_second: 1000000\n  connections: 100000\n  connections_per_ip: -1\nlog:\n  level: warn\n", addr)
		admin := ""
		if o.profileDir != "" {
			if admin, err = freeAddr(); err != nil {
				return nil, nil, err
			}
			cfg += fmt.Sprintf("admin:\n  listen: %s\n", admin)
		}
		path := filepath.Join(o.workDir, "sluice.yaml")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, nil, err
		}
		p, err := startProcess(ctx, o.sluiceBin, o.workDir, "http://"+addr+"/healthz", "edge", "--config", path)
		if err != nil {
			return nil, nil, err
		}
		if admin != "" {
			p.admin = "http://" + admin
		}
		d := &loadgen.RTM{Label: "sluice", URL: "ws://" + addr, Options: client.Options{
			AppKey: "demo", Codec: o.sluiceCodec, Logger: quietLogger(),
		}}
		return p, d, nil
	}}
}

// centrifugoSystem runs Centrifugo with anonymous publish and subscribe
// on every channel, the memory engine and no history (its fastest
// setting), and no usage statistics.
func centrifugoSystem() system {
	return system{name: "centrifugo", start: func(ctx context.Context, o *options) (*process, loadgen.Driver, error) {
		addr, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		cfg := centrifugoConfig(host, port)
		path := filepath.Join(o.workDir, "centrifugo.json")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, nil, err
		}
		p, err := startProcess(ctx, o.centrifugoBin, o.workDir, "http://"+addr+"/health", "--config", path)
		if err != nil {
			return nil, nil, err
		}
		return p, &centrifugoDriver{url: "ws://" + addr + "/connection/websocket", json: o.centrifugoJSON}, nil
	}}
}

// centrifugoConfig is Centrifugo v6's configuration for the comparison:
// keys from its internal/configtypes (client.*, channel.without_namespace.*).
func centrifugoConfig(host, port string) string {
	return `{
  "http_server": {"address": "` + host + `", "port": ` + port + `},
  "log": {"level": "warn"},
  "engine": {"type": "memory"},
  "usage_stats": {"disabled": true},
  "health": {"enabled": true},
  "http_api": {"key": "compare-` + strconv.Itoa(os.Getpid()) + `"},
  "client": {
    "allow_anonymous_connect_without_token": true,
    "allowed_origins": ["*"]
  },
  "channel": {
    "without_namespace": {
      "allow_subscribe_for_anonymous": true,
      "allow_subscribe_for_client": true,
      "allow_publish_for_anonymous": true,
      "allow_publish_for_client": true
    }
  }
}
`
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

package edgecmd

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/internal/poll"
)

// TestReadyFile: Options.ReadyFile holds what Info says (the URL, the
// admin listener, the appkeys, the process id), and is gone once the
// edge has stopped.
func TestReadyFile(t *testing.T) {
	ready := filepath.Join(t.TempDir(), "ready.json")
	e := startEdgeOpts(t, "admin: {listen: 127.0.0.1:0}\n", &Options{ReadyFile: ready})
	info, err := readyfile.Read(ready)
	if err != nil {
		t.Fatal(err)
	}
	if info.URL != "ws://"+info.Listen || info.Admin == "" || info.HTTP != "" || !slices.Equal(info.AppKeys, []string{"demo"}) || info.PID != os.Getpid() {
		t.Errorf("ready file %+v", info)
	}
	if got := e.Info(); !reflect.DeepEqual(got, info) || e.URL() != info.URL {
		t.Errorf("Info() = %+v, URL() = %q; the ready file says %+v", got, e.URL(), info)
	}
	if _, err := e.stop(t); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ready); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ready file after the edge stopped: %v, want none", err)
	}
}

// TestReadyFileOfAFailedStart: a ready file left by an edge that was
// killed is removed when the next one starts, even if that one then
// fails, so a script waiting for the file does not take the old one.
func TestReadyFileOfAFailedStart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ready := filepath.Join(t.TempDir(), "ready.json")
	if err := readyfile.Write(ready, readyfile.Info{URL: "ws://stale"}); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Listen = ln.Addr().String()
	e, err := Start(context.Background(), cfg, &Options{ReadyFile: ready})
	if err == nil {
		e.Close()
		t.Fatal("an edge on a port in use started")
	}
	if _, serr := os.Stat(ready); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("stale ready file after a failed start (%v): %v, want none", err, serr)
	}
}

// TestShutdownDrainsAsSIGTERM: Shutdown reports not-ready for the drain
// delay while the edge serves on, new connections included; its ctx
// ending cuts the delay short, and the edge then closes its connections
// with 1001. Shutdown and Close again wait for the same stop.
func TestShutdownDrainsAsSIGTERM(t *testing.T) {
	e := startTestEdge(t, "limits:\n  drain_delay: 30s\n  drain_spread: 0s\n  shutdown_timeout: 5s\n")
	held := dialJSON(t, e.url+"/v2?appkey=demo", nil)
	// The metric says what /readyz says, for alerts.
	if _, body := httpGet(t, "http://"+e.addr+"/metrics"); !strings.Contains(body, "\nsluice_server_ready 1\n") {
		t.Fatalf("/metrics of a ready edge lacks sluice_server_ready 1:\n%s", body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- e.Shutdown(ctx) }()
	poll.Until(t, "/readyz answers 503 draining", func() bool {
		code, _ := httpGet(t, "http://"+e.addr+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	if _, body := httpGet(t, "http://"+e.addr+"/metrics"); !strings.Contains(body, "\nsluice_server_ready 0\n") {
		t.Fatalf("/metrics of a draining edge lacks sluice_server_ready 0:\n%s", body)
	}
	late := dialJSON(t, e.url+"/v2?appkey=demo", nil) // still served
	if a, _ := late.call("rtm/publish", map[string]any{"channel": "chat", "message": 1}); a != "rtm/publish/ok" {
		t.Fatalf("a publish during the drain delay: %s", a)
	}
	late.ws.CloseNow() // else, never reading, it holds the drain to its deadline
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v within its 30s delay", err)
	case <-e.Done():
		t.Fatal("the edge stopped within its 30s delay")
	default:
	}
	start := time.Now()
	cancel()
	if err := poll.Recv(t, "Shutdown to return", shut); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with its ctx cancelled: %v, want context.Canceled", err)
	}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer rcancel()
	if _, _, err := held.ws.Read(rctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("held client read %v, want close 1001 going away", err)
	}
	if err := e.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("stopped %v after the cancel, want the delay cut short", d)
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown again: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("Close after Shutdown: %v", err)
	}
}

// TestRestartWhileDrainingSaysSo: an edge started on the port of one that
// is draining (SIGTERM, then at once a restart) fails, and its error says
// that a draining edge may hold the port, as "address already in use"
// alone does not.
func TestRestartWhileDrainingSaysSo(t *testing.T) {
	old := startTestEdge(t, "limits:\n  drain_delay: 30s\n  drain_spread: 0s\n  shutdown_timeout: 5s\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- old.Shutdown(ctx) }()
	poll.Until(t, "/readyz answers 503 draining", func() bool {
		code, _ := httpGet(t, "http://"+old.addr+"/readyz")
		return code == http.StatusServiceUnavailable
	})
	cfg := DefaultConfig()
	cfg.Listen = old.addr
	e, err := Start(context.Background(), cfg, nil)
	if err == nil {
		e.Close()
		t.Fatal("an edge started on the port of one draining")
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "an edge may still be draining on this port") {
		t.Errorf("start on a draining edge's port: %v, want address in use and that an edge may be draining", err)
	}
	cancel() // the old edge's drain, cut short
	if err := poll.Recv(t, "Shutdown to return", shut); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := old.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}

// TestBusyPortHint: the hint is added to a port in use, as an error value
// (the listeners') or as text (the embedded NATS node's), and to nothing
// else.
func TestBusyPortHint(t *testing.T) {
	nats := errors.New("journal: start node: Error listening on router port: 6222 - listen tcp 127.0.0.1:6222: bind: address already in use")
	if got := busyPortHint(nats); !strings.Contains(got.Error(), "an edge may still be draining on this port") {
		t.Errorf("busyPortHint(NATS's error) = %v", got)
	}
	other := errors.New("listen tcp: lookup nowhere: no such host")
	if got := busyPortHint(other); got != other {
		t.Errorf("busyPortHint(%v) = %v, want it unchanged", other, got)
	}
}

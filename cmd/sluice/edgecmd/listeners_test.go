package edgecmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/syncbuf"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/internal/poll"
)

// runningEdge is an Edge serving in the test process.
type runningEdge struct {
	*Edge
	url   string // ws:// or wss:// endpoint
	addr  string // host:port of the main listener
	admin string // host:port of the admin listener, if any
	plain string // host:port of the HTTP listener beside HTTPS, if any
	out   *syncbuf.Buffer
	logs  *syncbuf.Buffer
}

// startTestEdge starts an edge configured by yaml, the text of a config
// file (listen 127.0.0.1:0 unless it sets one), until the test ends.
func startTestEdge(t *testing.T, yaml string) *runningEdge {
	t.Helper()
	return startEdgeOpts(t, yaml, nil)
}

// startEdgeOpts is startTestEdge with opts, whose Stdout and Stderr it
// replaces.
func startEdgeOpts(t *testing.T, yaml string, opts *Options) *runningEdge {
	t.Helper()
	cfg, err := LoadConfig(writeEdgeConfig(t, yaml))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &runningEdge{out: &syncbuf.Buffer{}, logs: &syncbuf.Buffer{}}
	o.Stdout, o.Stderr = e.out, e.logs
	if e.Edge, err = Start(context.Background(), cfg, &o); err != nil {
		t.Fatalf("start: %v\n%s", err, e.logs.String())
	}
	t.Cleanup(func() { e.Close() })
	info := e.Info()
	e.url, e.addr, e.admin, e.plain = info.URL, info.Listen, info.Admin, info.HTTP
	return e
}

// stop closes the edge, as SIGINT does, and returns how long it took and
// what Close returned.
func (e *runningEdge) stop(t *testing.T) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- e.Close() }()
	select {
	case err := <-errc:
		return time.Since(start), err
	case <-time.After(20 * time.Second):
		t.Fatal("edge still running 20s after Close")
		return 0, nil
	}
}

// httpGet fetches url and returns the status and body.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// jsonConn is a raw RTM connection in the JSON codec.
type jsonConn struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialJSON(t *testing.T, url string, opts *websocket.DialOptions) *jsonConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &jsonConn{t: t, ws: ws}
}

// call sends a request with an id and returns the reply's action and body.
func (c *jsonConn) call(action string, body any) (string, map[string]any) {
	c.t.Helper()
	c.send(map[string]any{"action": action, "id": 1, "body": body})
	return c.next()
}

func (c *jsonConn) send(pdu any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, _ := json.Marshal(pdu)
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *jsonConn) next() (string, map[string]any) {
	c.t.Helper()
	p := servertest.Recv[servertest.PDU](c.t, c.ws, 5*time.Second)
	return p.Action, p.Body
}

// metricValues parses the text format into "name{labels}" -> value.
func metricValues(text string) map[string]float64 {
	out := make(map[string]float64)
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			out[line[:i]] = v
		}
	}
	return out
}

// writeEdgeConfig writes a config file and returns its path.
func writeEdgeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edge.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEdgeHealthAndMetricsOnMainListener(t *testing.T) {
	e := startTestEdge(t, "")
	base := "http://" + e.addr
	if code, body := httpGet(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Fatalf("/healthz = %d %q", code, body)
	}
	if code, body := httpGet(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Fatalf("/readyz = %d %q", code, body)
	}
	if code, _ := httpGet(t, base+"/debug/pprof/"); code != http.StatusNotFound {
		t.Fatalf("/debug/pprof/ on the main listener = %d, want 404", code)
	}

	sub := dialJSON(t, e.url+"/v2?appkey=demo", nil)
	if a, _ := sub.call("rtm/subscribe", map[string]any{"channel": "chat"}); a != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %s", a)
	}
	pub := dialJSON(t, e.url+"/v2?appkey=demo", nil)
	for i := range 2 {
		if a, _ := pub.call("rtm/publish", map[string]any{"channel": "chat", "message": i}); a != "rtm/publish/ok" {
			t.Fatalf("publish: %s", a)
		}
	}
	for n := 0; n < 2; {
		a, body := sub.next()
		if a != "rtm/subscription/data" {
			t.Fatalf("got %s", a)
		}
		n += len(body["messages"].([]any))
	}
	var m map[string]float64
	poll.Until(t, "two first deliveries in /metrics", func() bool {
		_, text := httpGet(t, base+"/metrics")
		m = metricValues(text)
		return m["sluice_server_first_delivery_latency_seconds_count"] == 2
	})
	for name, want := range map[string]float64{
		`sluice_server_connections`:                            2,
		`sluice_server_subscriptions`:                          1,
		`sluice_server_published_messages_total{codec="json"}`: 2,
		`sluice_server_delivered_messages_total{codec="json"}`: 2,
		`sluice_server_first_delivery_latency_seconds_count`:   2,
	} {
		if m[name] != want {
			t.Errorf("%s = %v, want %v", name, m[name], want)
		}
	}
	// The store also holds what the edge publishes itself ($sys.stats).
	if m["sluice_store_appended_messages_total"] < 2 || m["sluice_store_channels"] < 1 {
		t.Errorf("store: %v appended, %v channels; want at least the 2 messages of chat",
			m["sluice_store_appended_messages_total"], m["sluice_store_channels"])
	}
}

func TestEdgeAdminListener(t *testing.T) {
	e := startTestEdge(t, "admin: {listen: 127.0.0.1:0}\n")
	if e.admin == "" {
		t.Fatalf("banner names no admin listener:\n%s", e.out.String())
	}
	for _, tc := range []struct {
		name, url string
		code      int
		contains  string
	}{
		{"metrics on admin", "http://" + e.admin + "/metrics", 200, "sluice_server_connections 0"},
		{"pprof on admin", "http://" + e.admin + "/debug/pprof/", 200, "goroutine"},
		{"readyz on admin", "http://" + e.admin + "/readyz", 200, "ready"},
		{"healthz on main", "http://" + e.addr + "/healthz", 200, "ok"},
		{"no metrics on main", "http://" + e.addr + "/metrics", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := httpGet(t, tc.url)
			if code != tc.code || !strings.Contains(body, tc.contains) {
				t.Fatalf("GET %s = %d, body has %q: %v", tc.url, code, tc.contains, strings.Contains(body, tc.contains))
			}
		})
	}
}

func TestEdgeDrainReportsNotReady(t *testing.T) {
	e := startTestEdge(t, "limits:\n  shutdown_timeout: 5s\n")
	// A client that does not read holds the drain open: the edge waits for
	// its answer to the close frame.
	held := dialJSON(t, e.url+"/v2?appkey=demo", nil)
	stopped := make(chan time.Duration, 1)
	go func() {
		d, err := e.stop(t)
		if err != nil {
			t.Errorf("Close returned %v after a drain", err)
		}
		stopped <- d
	}()
	poll.Until(t, "/readyz answers 503 draining", func() bool {
		code, body := httpGet(t, "http://"+e.addr+"/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "draining")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=demo", nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new connection while draining: %v, want HTTP 503", err)
	}
	_, _, err := held.ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("held client read %v, want close 1001 going away", err)
	}
	if d := <-stopped; d > 5*time.Second {
		t.Fatalf("drain took %v, more than its 5s deadline", d)
	}
}

func TestEdgeDrainDeadline(t *testing.T) {
	e := startTestEdge(t, "limits:\n  shutdown_timeout: 300ms\n")
	dialJSON(t, e.url+"/v2?appkey=demo", nil) // never reads, never answers the close
	d, err := e.stop(t)
	if err != nil {
		t.Fatalf("Close returned %v; a drain past its deadline is still a clean stop", err)
	}
	if d > 2*time.Second {
		t.Fatalf("stopping took %v with a 300ms deadline", d)
	}
	if !strings.Contains(e.logs.String(), "drain deadline passed") {
		t.Fatalf("logs do not say the deadline passed:\n%s", e.logs.String())
	}
}

// TestSlowDrainOnSIGTERMOnly: the slow drain (readiness delay, spread
// closes) is for SIGTERM, told apart by the cause main's
// signal.NotifyContext gives its context (Run then calls Shutdown);
// SIGINT or a plain cancel (Close), a lost stream or a failed listener
// drain at once. Real signals, to this test process.
func TestSlowDrainOnSIGTERMOnly(t *testing.T) {
	for _, tt := range []struct {
		name string
		sig  syscall.Signal
		want bool
	}{
		{name: "SIGTERM", sig: syscall.SIGTERM, want: true},
		{name: "SIGINT", sig: syscall.SIGINT, want: false},
	} {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		if err := syscall.Kill(os.Getpid(), tt.sig); err != nil {
			stop()
			t.Fatal(err)
		}
		<-ctx.Done()
		got := terminated(ctx)
		stop()
		if got != tt.want {
			t.Errorf("%s: terminated %v, want %v", tt.name, got, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if terminated(ctx) {
		t.Error("a cancel without signal counts as SIGTERM")
	}
	for _, tt := range []struct {
		name   string
		cause  error
		failed error
		want   bool
	}{
		{name: "Shutdown", cause: errShutdown, want: true},
		{name: "Shutdown after a failure", cause: errShutdown, failed: errors.New("listener failed"), want: false},
		{name: "Close", cause: errClosed, want: false},
		{name: "stream lost", cause: journal.ErrStreamLost, want: false},
	} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(tt.cause)
		if got := slowDrain(ctx, tt.failed); got != tt.want {
			t.Errorf("%s: slow drain %v, want %v", tt.name, got, tt.want)
		}
	}
}

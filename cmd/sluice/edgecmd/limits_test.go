package edgecmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/internal/poll"
)

// heldConn is a raw HTTP/1.1 connection to the edge that the test keeps
// open after its request, as a keep-alive client does.
type heldConn struct {
	nc net.Conn
	br *bufio.Reader
}

// holdConn dials addr and, unless path is "", sends GET path and reads
// the response, leaving the connection open; it returns the response.
func holdConn(t *testing.T, addr, path string, header ...string) (*heldConn, *http.Response) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { nc.Close() })
	h := &heldConn{nc: nc, br: bufio.NewReader(nc)}
	if path == "" {
		return h, nil
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	defer nc.SetDeadline(time.Time{})
	req := "GET " + path + " HTTP/1.1\r\nHost: edge\r\n"
	for _, h := range header {
		req += h + "\r\n"
	}
	if _, err := io.WriteString(nc, req+"\r\n"); err != nil {
		t.Fatalf("request: %v", err)
	}
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		t.Fatalf("response: %v", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatalf("response body: %v", err)
	}
	return h, resp
}

// closedByServer waits up to d for the server to close the connection.
func (h *heldConn) closedByServer(d time.Duration) error {
	h.nc.SetReadDeadline(time.Now().Add(d))
	n, err := h.br.Read(make([]byte, 1))
	switch {
	case n > 0:
		return errors.New("unexpected bytes from the server")
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return nil
	}
	return err
}

// TestEdgeClosesIdleHTTPConnections is the attack of keep-alive
// connections that never upgrade (and of connections that never send a
// request): with idle_timeout 300ms the edge closes every one of them,
// while an upgraded WebSocket outlives the HTTP timeouts.
func TestEdgeClosesIdleHTTPConnections(t *testing.T) {
	const (
		keepAlive = 200
		silent    = 50
		idle      = 300 * time.Millisecond
	)
	e := startTestEdge(t, "limits:\n  idle_timeout: 300ms\n")
	ws := dialJSON(t, e.url+"/v2?appkey=demo", nil)

	conns := make([]*heldConn, 0, keepAlive+silent)
	for range keepAlive {
		h, resp := holdConn(t, e.addr, "/healthz")
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("GET /healthz: %s, close %v; want 200 kept alive", resp.Status, resp.Close)
		}
		conns = append(conns, h)
	}
	for range silent {
		h, _ := holdConn(t, e.addr, "")
		conns = append(conns, h)
	}
	// Before the fix the keep-alive ones were held forever, the silent ones
	// for 10s.
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, h := range conns {
		wg.Go(func() { errs[i] = h.closedByServer(5 * time.Second) })
	}
	wg.Wait()
	open := 0
	for _, err := range errs {
		if err != nil {
			open++
		}
	}
	if open > 0 {
		t.Fatalf("%d of %d idle connections still open 5s after an idle timeout of %v", open, len(conns), idle)
	}

	<-time.After(3 * idle) // the WebSocket sits idle past every HTTP timeout, on purpose
	if a, body := ws.call("rtm/publish", map[string]any{"channel": "c", "message": 1}); a != "rtm/publish/ok" {
		t.Fatalf("WebSocket after %v idle: %s %v, want rtm/publish/ok", 3*idle, a, body)
	}
}

// TestEdgeConnectionsPerIP holds connections_per_ip connections open
// from 127.0.0.1: the next WebSocket upgrade and the next HTTP request
// get 429 with a JSON body and are closed (readable with CORS from an
// allowed origin, as the browser client's probe needs); once one held
// connection closes, a new one is served again.
func TestEdgeConnectionsPerIP(t *testing.T) {
	const limit = 20
	e := startTestEdge(t, "limits:\n  connections_per_ip: 20\nallowed_origins: [app.example.com]\n")
	held := make([]*heldConn, 0, limit)
	held = append(held, nil) // the WebSocket below is one of them
	ws := dialJSON(t, e.url+"/v2?appkey=demo", nil)
	for len(held) < limit {
		h, resp := holdConn(t, e.addr, "/healthz")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("connection %d: %s, want 200", len(held), resp.Status)
		}
		held = append(held, h)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=demo", nil)
	if err == nil {
		c.CloseNow()
		t.Fatalf("upgrade past %d connections from one address accepted", limit)
	}
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("upgrade past the limit: %v, want HTTP 429", err)
	}
	checkRefusal(t, resp)

	extra, resp := holdConn(t, e.addr, "/healthz")
	if resp.StatusCode != http.StatusTooManyRequests || !resp.Close {
		t.Fatalf("GET past the limit: %s, close %v; want 429 and close", resp.Status, resp.Close)
	}
	if err := extra.closedByServer(5 * time.Second); err != nil {
		t.Fatalf("connection refused with 429 not closed: %v", err)
	}
	for origin, want := range map[string]string{"https://app.example.com": "https://app.example.com", "https://other.example.com": ""} {
		_, resp := holdConn(t, e.addr, "/v2?appkey=demo", "Origin: "+origin)
		if got := resp.Header.Get("Access-Control-Allow-Origin"); resp.StatusCode != http.StatusTooManyRequests || got != want {
			t.Fatalf("the browser's probe from %s past the limit: %s, Access-Control-Allow-Origin %q; want 429 and %q",
				origin, resp.Status, got, want)
		}
	}

	// Connections that were open before the limit was reached still work.
	if a, _ := ws.call("rtm/publish", map[string]any{"channel": "c", "message": 1}); a != "rtm/publish/ok" {
		t.Fatalf("WebSocket within the limit: %s", a)
	}
	held[1].nc.Close()
	poll.Until(t, "a new connection served once one closed", func() bool {
		h, resp := holdConn(t, e.addr, "/healthz")
		h.nc.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// checkRefusal checks a refusal's JSON body.
func checkRefusal(t *testing.T, resp *http.Response) {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	var body map[string]string
	if err := json.Unmarshal(b, &body); err != nil || body["error"] != "too_many_connections" || body["reason"] == "" {
		t.Fatalf("refusal body %q, want JSON with error too_many_connections and a reason", b)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("refusal Content-Type %q", ct)
	}
}

// TestDefaultConnections checks the connections default derived from the
// open-files limit, which keeps room for the edge's other descriptors.
func TestDefaultConnections(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		files uint64
		want  int
	}{
		{"unknown", 0, 0},
		{"this machine's 20,000", 20_000, 18_000},
		{"ulimit 1024: 256 kept", 1024, 768},
		{"tiny", 300, 150},
		{"huge: capped", 10_000_000, 100_000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := defaultConnections(tt.files); got != tt.want {
				t.Fatalf("defaultConnections(%d) = %d, want %d", tt.files, got, tt.want)
			}
		})
	}
	opts, err := DefaultConfig().ServerOptions()
	if err != nil {
		t.Fatal(err)
	}
	if want := defaultConnections(openFilesLimit()); opts.Limits.Connections != want || want == 0 {
		t.Fatalf("default connections %d, want %d (open files %d)", opts.Limits.Connections, want, openFilesLimit())
	}
}

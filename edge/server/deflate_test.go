package server_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
)

// countingConn counts the bytes read from the network.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// TestDeflatePerApp checks the per-app switch: an app with Deflate
// answers a client's permessage-deflate offer and its data arrives
// compressed (fewer bytes on the wire than the messages hold), an app
// without declines it; both deliver the same messages.
func TestDeflatePerApp(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[on], func(t *testing.T) {
			t.Parallel()
			e := startEdge(t, func(o *server.Options) { o.Apps[0].Deflate = on })
			var read atomic.Int64
			var d net.Dialer
			hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				nc, err := d.DialContext(ctx, network, addr)
				return countingConn{nc, &read}, err
			}}}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			ws, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", &websocket.DialOptions{
				HTTPClient: hc, CompressionMode: websocket.CompressionNoContextTakeover,
			})
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			t.Cleanup(func() { ws.CloseNow() })
			ws.SetReadLimit(1 << 20)
			ext := resp.Header.Get("Sec-WebSocket-Extensions")
			if on != strings.HasPrefix(ext, "permessage-deflate") {
				t.Fatalf("Sec-WebSocket-Extensions %q with deflate %v", ext, on)
			}
			c := &rawClient{t: t, ws: ws}
			c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "feed"})
			msg := map[string]any{"rows": strings.Repeat(`{"symbol":"SLC","bid":101.25,"ask":101.5},`, 50)}
			const n = 20
			before := read.Load()
			pub := e.dial(t, "test", "")
			for i := range n {
				pub.expectOK("rtm/publish", 1+i, map[string]any{"channel": "feed", "message": msg})
			}
			for got := 0; got < n; {
				p := c.recv()
				if p.Action == "rtm/subscription/data" {
					got += len(p.Body["messages"].([]any))
				}
			}
			wire := read.Load() - before
			raw := int64(n * len(msg["rows"].(string)))
			if on && wire*2 > raw {
				t.Errorf("%d bytes on the wire for %d bytes of messages: not compressed", wire, raw)
			}
			if !on && wire < raw {
				t.Errorf("%d bytes on the wire for %d bytes of messages without deflate", wire, raw)
			}
		})
	}
}

package server_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
)

// FuzzConnection feeds arbitrary frames to a live connection: whatever the
// frame, the edge must not panic, and the connection must still answer the
// next well-formed request.
func FuzzConnection(f *testing.F) {
	seeds := []string{
		`{"action":"rtm/publish","id":1,"body":{"channel":"a","message":{"x":[1,2.5,"s",null,true]}}}`,
		`{"action":"rtm/subscribe","id":2,"body":{"channel":"a","history":{"count":5,"age":60}}}`,
		`{"action":"rtm/subscribe","id":"s","body":{"channel":"a","position":"1:1","fast_forward":true,"force":true}}`,
		`{"action":"rtm/unsubscribe","id":3,"body":{"subscription_id":"a"}}`,
		`{"action":"rtm/read","id":4,"body":{"channel":"a","position":"18446744073709551615:0"}}`,
		`{"action":"auth/handshake","id":5,"body":{"method":"role_secret","data":{"role":"admin"}}}`,
		`{"action":"auth/authenticate","id":6,"body":{"method":"jwt","credentials":{"token":"a.b.c"}}}`,
		`{"action":"rtm/delete","body":{"channel":"$heartbeat"}}`,
		`{"action":7,"id":[],"body":"x"}`,
		`{"action":"rtm/publish","id":1e400,"body":{"channel":"a","message":-1e400}}`,
		"\xff\xfe", `[]`, `null`, ``,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	e := startEdge(f, func(o *server.Options) { o.Limits.RequestsPerSecond = 1 << 30 })
	c := e.dial(f, "test", "").ws
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > 32<<10 {
			return // past the read limit the edge closes the connection by design
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.Write(ctx, websocket.MessageText, frame); err != nil {
			t.Fatalf("write: %v", err)
		}
		if err := c.Write(ctx, websocket.MessageText, []byte(`{"action":"rtm/read","id":"sentinel-8d1f","body":{"channel":"z"}}`)); err != nil {
			t.Fatalf("write sentinel: %v", err)
		}
		for {
			_, data, err := c.Read(ctx)
			if err != nil {
				t.Fatalf("connection unusable after %q: %v", frame, err)
			}
			if bytes.Contains(data, []byte(`"id":"sentinel-8d1f"`)) {
				if !bytes.HasPrefix(data, []byte(`{"action":"rtm/read/ok"`)) {
					t.Fatalf("sentinel read failed after %q: %s", frame, data)
				}
				return
			}
		}
	})
}

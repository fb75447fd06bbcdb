//go:build !js

package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// pingingEdge is a WebSocket server on a real socket that answers every
// JSON request with ok and a position, the reply followed by a ping in
// the same write: a reply and a ping of the edge's keep-alive that
// reach the client in one read.
type pingingEdge struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // the actions received, in order
	wg   sync.WaitGroup
}

func startPingingEdge(t *testing.T) *pingingEdge {
	t.Helper()
	e := &pingingEdge{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"json"}})
		if err != nil {
			return
		}
		e.wg.Add(1)
		defer e.wg.Done()
		defer ws.CloseNow()
		var buf []byte
		for {
			_, p, err := ws.ReadMessage(buf)
			if err != nil {
				return
			}
			buf = p[:0]
			var req struct {
				Action string `json:"action"`
				ID     int64  `json:"id"`
			}
			if json.Unmarshal(p, &req) != nil {
				return
			}
			e.mu.Lock()
			e.seen = append(e.seen, req.Action)
			n := len(e.seen)
			e.mu.Unlock()
			reply, _ := json.Marshal(map[string]any{
				"action": req.Action + "/ok", "id": req.ID,
				"body": map[string]any{"position": "1:" + strconv.Itoa(n)},
			})
			out := ws.AppendFrame(nil, websocket.OpText, reply)
			out = ws.AppendFrame(out, websocket.OpPing, nil)
			if ws.Write(out) != nil {
				return
			}
		}
	}))
	t.Cleanup(func() {
		e.srv.CloseClientConnections()
		e.srv.Close()
		e.wg.Wait()
	})
	return e
}

// TestRequestAfterReplyAndPing: a reply and a ping read together leave
// the client free to write. The reader used to stay "corked" (holding
// back requests to write them together) because bytes were still
// buffered after the reply, and those bytes were the ping: it then
// waited for the edge's next message with every later request queued
// unwritten. Against an edge that sends nothing unasked, such as a
// publisher's, the connection was stuck for good: a soak's publishers
// ended with each lane's last publish "no acknowledgment before the
// drain ended", never sent.
func TestRequestAfterReplyAndPing(t *testing.T) {
	e := startPingingEdge(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(e.srv.URL, "http"), &Options{AppKey: "k", Codec: "json"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 3 {
		// Each publish's reply comes with a ping behind it, so the one
		// after it is sent while the reader waits for the edge.
		if _, err := c.Publish(ctx, "ch", i); err != nil {
			e.mu.Lock()
			seen := append([]string(nil), e.seen...)
			e.mu.Unlock()
			t.Fatalf("publish %d: %v; the edge received %q", i, err, seen)
		}
	}
	// And from a reply callback, as a load generator's lane publishes.
	done := make(chan error, 1)
	err = c.PublishAsync("ch", "first", func(_ rtm.Position, err error) {
		if err != nil {
			done <- err
			return
		}
		if err := c.PublishAsync("ch", "second", func(_ rtm.Position, err error) { done <- err }); err != nil {
			done <- err
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chained publish: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the publish made by a reply callback was never answered")
	}
}

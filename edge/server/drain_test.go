package server_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
)

// TestBeginDrainKeepsServing: once BeginDrain is called the edge reports
// not-ready (for /readyz) but still serves: open connections work, and a
// new one is accepted.
func TestBeginDrainKeepsServing(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	open := e.dial(t, "test", "")
	if err := e.srv.Ready(); err != nil || e.srv.Draining() {
		t.Fatalf("before: Ready() = %v, Draining() = %v", err, e.srv.Draining())
	}
	e.srv.BeginDrain()
	if err := e.srv.Ready(); err == nil || !e.srv.Draining() {
		t.Fatalf("after BeginDrain: Ready() = %v, Draining() = %v; want not ready, draining", err, e.srv.Draining())
	}
	open.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": "still served"})
	late := e.dial(t, "test", "")
	late.expectOK("rtm/read", 1, map[string]any{"channel": "a"})
}

// closeWatcher is a client that records when it reads the edge's close.
type closeWatcher struct {
	mu     sync.Mutex
	at     time.Time // when the close arrived; zero before
	status websocket.StatusCode
	done   chan struct{}
}

func watchClose(t *testing.T, url string) *closeWatcher {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	ws, _, err := websocket.Dial(ctx, url+"/v2?appkey=test", nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	// A reply proves the edge tracks the connection (it counts it
	// sooner), so that Shutdown's spread takes it in.
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"action":"rtm/read","id":1,"body":{"channel":"x"}}`)); err != nil {
		cancel()
		t.Fatal(err)
	}
	if _, _, err := ws.Read(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	w := &closeWatcher{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer cancel()
		defer ws.CloseNow()
		for {
			if _, _, err := ws.Read(ctx); err != nil {
				w.mu.Lock()
				w.at, w.status = time.Now(), websocket.CloseStatus(err)
				w.mu.Unlock()
				return
			}
		}
	}()
	t.Cleanup(func() {
		ws.CloseNow()
		<-w.done
	})
	return w
}

func (w *closeWatcher) closed() (time.Time, websocket.StatusCode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.at, w.status
}

// TestShutdownSpreadsCloses: with a DrainSpread, Shutdown closes the
// connections one after the other over the window, the i-th of n no
// sooner than spread*i/n after it began, so a client never sees more
// closes by then than that allows; Hurry closes the rest at once.
func TestShutdownSpreadsCloses(t *testing.T) {
	t.Parallel()
	const n, spread = 4, time.Minute
	e := startEdge(t, func(o *server.Options) { o.Limits.DrainSpread = spread })
	ws := make([]*closeWatcher, n)
	for i := range ws {
		ws[i] = watchClose(t, e.url)
	}
	start := time.Now()
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*spread)
		defer cancel()
		shut <- e.srv.Shutdown(ctx)
	}()
	closedCount := func() int {
		k := 0
		for _, w := range ws {
			if at, _ := w.closed(); !at.IsZero() {
				k++
			}
		}
		return k
	}
	// The first goes at once.
	poll.Until(t, "the first close", func() bool { return closedCount() > 0 })
	elapsed := time.Since(start)
	// Closes are sent at spread*i/n from a start after ours, and arrive
	// later still: by elapsed, at most those due have been seen.
	if most := int(elapsed*n/spread) + 1; closedCount() > most {
		for _, w := range ws {
			at, st := w.closed()
			t.Logf("closed at %v with %v", at.Sub(start), st)
		}
		t.Fatalf("%d of %d closed %v into a %v spread, want at most %d", closedCount(), n, elapsed, spread, most)
	}
	e.srv.Hurry()
	for _, w := range ws {
		<-w.done
		if _, st := w.closed(); st != websocket.StatusGoingAway {
			t.Fatalf("closed with %v, want 1001 going away", st)
		}
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown = %v after Hurry, want nil", err)
	}
}

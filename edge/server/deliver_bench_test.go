package server

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/websocket"
)

// discardObserver is a first-delivery histogram that keeps nothing.
type discardObserver struct{}

func (discardObserver) Observe(float64) {}

// deliveryRig is one subscriber's connection on a real edge, over a real
// WebSocket, with 16 stored messages of 128 bytes ready to send to it.
type deliveryRig struct {
	c      *conn
	sub    *subscription
	w      *writer
	frames []store.Frame
}

// newDeliveryRig starts the edge and the subscriber; everything stops
// when tb ends.
func newDeliveryRig(tb testing.TB) *deliveryRig {
	tb.Helper()
	srv, err := New(&Options{Apps: []*app.App{app.Demo()}, FirstDelivery: discardObserver{},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/v2?appkey=demo", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ws.CloseNow()
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx)
		hs.Close()
	})
	var c *conn
	// The accept runs on its own goroutine.
	poll.Until(tb, "the edge to register the connection", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		for k := range srv.conns {
			c = k
		}
		return c != nil
	})
	msg := strings.Repeat("x", 128)
	for range 16 {
		if _, err := srv.Publish("demo", "bench", msg); err != nil {
			tb.Fatal(err)
		}
	}
	cur, err := srv.store.Subscribe(storeKey(c.app, "bench"), store.Start{HistoryCount: 16})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cur.Close)
	frames, err := cur.Read(make([]store.Frame, 0, 16), 0)
	if err != nil || len(frames) != 16 {
		tb.Fatalf("read %d frames, %v; want 16", len(frames), err)
	}
	w := writers.Get().(*writer)
	tb.Cleanup(func() { writers.Put(w) })
	return &deliveryRig{c: c, sub: &subscription{id: "bench", channel: "bench", cursor: cur}, w: w, frames: frames}
}

// send lays out one rtm/subscription/data of the 16 messages, counting
// it in every counter, as the writer does, without the system call.
func (r *deliveryRig) send(tb testing.TB) {
	if err := r.c.sendData(r.w, r.sub, r.frames); err != nil {
		tb.Fatal(err)
	}
	r.w.out = r.w.out[:0]
}

// BenchmarkSendData is the edge's delivery path for one subscriber: a
// batch of 16 stored messages spliced into one data PDU, framed, and
// counted (per codec, per app, first delivery). It must not allocate.
func BenchmarkSendData(b *testing.B) {
	r := newDeliveryRig(b)
	b.ReportAllocs()
	for b.Loop() {
		r.send(b)
	}
}

// TestSendDataAllocs keeps the delivery path at zero allocations.
func TestSendDataAllocs(t *testing.T) {
	r := newDeliveryRig(t)
	r.send(t) // the writer's buffers grow once
	if n := testing.AllocsPerRun(100, func() { r.send(t) }); n != 0 {
		t.Errorf("sendData allocates %v times per batch, want 0", n)
	}
}

package server

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/payload"
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
	// stored is frames as read, when some are the subscriber's own:
	// sendData drops those in place, so send puts them back first.
	stored []store.Frame
}

// newDeliveryRig starts the edge and the subscriber; everything stops
// when tb ends.
func newDeliveryRig(tb testing.TB) *deliveryRig {
	tb.Helper()
	return newDeliveryRigFrom(tb, nil)
}

// newDeliveryRigFrom is newDeliveryRig with the 16 messages stored from
// the origins origin(c, i) names (c the subscriber's connection; "" for
// none), as exclude_self and exclude_connection store them; nil: none.
func newDeliveryRigFrom(tb testing.TB, origin func(c *conn, i int) string) *deliveryRig {
	tb.Helper()
	srv, url := ServeEdge(tb, &Options{Apps: []*app.App{app.Demo()}, FirstDelivery: discardObserver{}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := websocket.Dial(ctx, url+"/v2?appkey=demo", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.CloseNow() }) // before the edge shuts down
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
	payload, _, err := payload.Encode(nil, msg, payload.Carrier, srv.codecUse.Codecs(payload.Carrier))
	if err != nil {
		tb.Fatal(err)
	}
	h := srv.store.Channel(c.app.StoreKey("bench"))
	for i := range 16 {
		o := ""
		if origin != nil {
			o = origin(c, i)
		}
		if _, err := h.AppendFrom(o, payload, 0); err != nil {
			tb.Fatal(err)
		}
	}
	cur, err := srv.store.Subscribe(c.app.StoreKey("bench"), store.Start{HistoryCount: 16})
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
	r := &deliveryRig{c: c, sub: &subscription{id: "bench", channel: "bench", cursor: cur}, w: w, frames: frames}
	if origin != nil {
		r.stored = slices.Clone(frames)
	}
	return r
}

// send lays out one rtm/subscription/data of the 16 messages, counting
// it in every counter, as the writer does, without the system call.
func (r *deliveryRig) send(tb testing.TB) {
	if r.stored != nil {
		copy(r.frames, r.stored)
	}
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

// BenchmarkSendDataOrigins is BenchmarkSendData with messages that carry
// an origin: "others", every one another connection's (each is compared,
// none dropped), and "own", every other one this connection's (dropped:
// the batch is compacted, 8 messages go out).
func BenchmarkSendDataOrigins(b *testing.B) {
	for _, bc := range []struct {
		name   string
		origin func(c *conn, i int) string
	}{
		{"others", func(c *conn, _ int) string { return c.who.id + "x" }},
		{"own", func(c *conn, i int) string {
			if i%2 == 0 {
				return c.who.id
			}
			return ""
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := newDeliveryRigFrom(b, bc.origin)
			b.ReportAllocs()
			for b.Loop() {
				r.send(b)
			}
		})
	}
}

// TestSendDataAllocs keeps the delivery path at zero allocations.
func TestSendDataAllocs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		origin func(c *conn, i int) string
	}{
		{"no origin", nil},
		{"own every other", func(c *conn, i int) string {
			if i%2 == 0 {
				return c.who.id
			}
			return "other.1"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newDeliveryRigFrom(t, tc.origin)
			r.send(t) // the writer's buffers grow once
			if n := testing.AllocsPerRun(100, func() { r.send(t) }); n != 0 {
				t.Errorf("sendData allocates %v times per batch, want 0", n)
			}
		})
	}
}

package delivery

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/internal/wstest"
	"github.com/sluicehq/sluice/shared/websocket"
)

// discardObserver is a first-delivery histogram that keeps nothing.
type discardObserver struct{}

func (discardObserver) Observe(float64) {}

// deliveryRig is one subscriber's connection on a delivery engine, over
// a real WebSocket, with 16 stored messages of 128 bytes ready to send
// to it.
type deliveryRig struct {
	c      *Conn
	sub    *Subscription
	w      *writer
	frames []store.Frame
	// stored is frames as read, when some are the subscriber's own:
	// sendData drops those in place, so send puts them back first.
	stored []store.Frame
	st     *store.Store
	views  filter.Shares
	wire   int // bytes the last send laid out
}

// newDeliveryRig starts the engine and the subscriber; everything stops
// when tb ends.
func newDeliveryRig(tb testing.TB) *deliveryRig {
	tb.Helper()
	return newDeliveryRigFrom(tb, nil)
}

// newDeliveryRigFrom is newDeliveryRig with the 16 messages stored from
// the origins origin(c, i) names (c the subscriber's connection; "" for
// none), as exclude_self and exclude_connection store them; nil: none.
func newDeliveryRigFrom(tb testing.TB, origin func(c *Conn, i int) string) *deliveryRig {
	tb.Helper()
	msgs := make([]any, 16)
	for i := range msgs {
		msgs[i] = strings.Repeat("x", 128)
	}
	return newRig(tb, wstest.ServerSide(tb), msgs, origin)
}

// newRig is newDeliveryRigFrom on the WebSocket ws, with msgs stored.
func newRig(tb testing.TB, ws *websocket.Conn, msgs []any, origin func(c *Conn, i int) string) *deliveryRig {
	tb.Helper()
	st := store.New(&store.Options{})
	tb.Cleanup(func() { st.Close() })
	eng := New(&Config{Store: st, Counters: &tally.Counters{}, FirstDelivery: discardObserver{},
		Logger: slog.New(slog.DiscardHandler), QueueBytes: 1 << 20, PrefixChannels: 4096})
	c := &Conn{}
	c.Init(eng, ws, "edge.1", "127.0.0.1:1", &tally.App{}, nil)
	r := &deliveryRig{c: c, st: st}
	origins := make([]string, len(msgs))
	for i := range msgs {
		if origin != nil {
			origins[i] = origin(c, i)
		}
	}
	r.sub = &Subscription{ID: "bench", Channel: "bench", Cursor: r.storeFrom(tb, "bench", origins, msgs...)}
	r.frames = r.read(tb, r.sub.Cursor, len(msgs))
	w := writers.Get().(*writer)
	tb.Cleanup(func() { writers.Put(w) })
	r.w = w
	if origin != nil {
		r.stored = slices.Clone(r.frames)
	}
	return r
}

// storeFrom stores msgs on channel (from origins[i] each, nil: none), in
// the carrier and JSON, and returns a cursor at the first of them.
func (r *deliveryRig) storeFrom(tb testing.TB, channel string, origins []string, msgs ...any) *store.Cursor {
	tb.Helper()
	key := "demo\x00" + channel
	h := r.st.Channel(key)
	for i, m := range msgs {
		p, _, err := payload.Encode(nil, m, payload.Carrier, payload.Mask(1)<<payload.Carrier|payload.Mask(1)<<payload.JSON)
		if err != nil {
			tb.Fatal(err)
		}
		o := ""
		if origins != nil {
			o = origins[i]
		}
		if _, err := h.AppendFrom(o, p, 0); err != nil {
			tb.Fatal(err)
		}
	}
	cur, err := r.st.Subscribe(key, store.Start{HistoryCount: len(msgs)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cur.Close)
	return cur
}

// read reads the n messages stored on cur.
func (r *deliveryRig) read(tb testing.TB, cur *store.Cursor, n int) []store.Frame {
	tb.Helper()
	frames, err := cur.Read(make([]store.Frame, 0, n), 0)
	if err != nil || len(frames) != n {
		tb.Fatalf("read %d frames, %v; want %d", len(frames), err, n)
	}
	return frames
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
	r.wire = len(r.w.out)
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
		origin func(c *Conn, i int) string
	}{
		{"others", func(c *Conn, _ int) string { return c.id + "x" }},
		{"own", func(c *Conn, i int) string {
			if i%2 == 0 {
				return c.id
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
		origin func(c *Conn, i int) string
	}{
		{"no origin", nil},
		{"own every other", func(c *Conn, i int) string {
			if i%2 == 0 {
				return c.id
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

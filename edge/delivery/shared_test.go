package delivery

import (
	"bytes"
	"testing"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/wstest"
	"github.com/sluicehq/sluice/shared/websocket"
)

// sendOut runs one sendData of frames for sub on c (a connection of
// the rig's), with the worker's kept frame sf (nil: none), and returns
// the frames it laid out.
func (r *deliveryRig) sendOut(tb testing.TB, c *Conn, sub *Subscription, frames []store.Frame, sf *sharedFrames) []byte {
	tb.Helper()
	r.w.share = sf
	defer func() { r.w.share, r.w.out = nil, r.w.out[:0] }() // the writer goes back to the pool
	r.w.out = r.w.out[:0]
	if err := c.sendData(r.w, sub, frames); err != nil {
		tb.Fatal(err)
	}
	return bytes.Clone(r.w.out)
}

// like is a connection that sends as c does (the fields sendData reads),
// but in codec i with opcode op.
func like(c *Conn, i int, op websocket.Opcode) *Conn {
	return &Conn{eng: c.eng, socket: socket{ws: c.ws, codec: payload.Codec(i), codecIndex: i, op: op, deflate: c.deflate}, peer: c.peer}
}

// deflating is like(c) on a WebSocket of its own that negotiated
// permessage-deflate, compressing every message.
func deflating(tb testing.TB, c *Conn) *Conn {
	ws := wstest.ServerSideWith(tb,
		&websocket.AcceptOptions{Deflate: &websocket.DeflateOptions{Threshold: -1}},
		&websocket.DialOptions{Deflate: &websocket.DeflateOptions{}})
	d := like(c, c.codecIndex, c.op)
	d.ws = ws
	d.deflate, _ = ws.Deflate()
	return d
}

// TestSharedFrameDeflate checks that a frame compressed for one
// connection that negotiated permessage-deflate goes to another one that
// did (no context takeover: the same bytes), and that the frame is
// compressed.
func TestSharedFrameDeflate(t *testing.T) {
	r := newDeliveryRig(t)
	d1, d2 := deflating(t, r.c), deflating(t, r.c)
	var sf sharedFrames
	first := r.sendOut(t, d1, r.sub, r.frames, &sf)
	if len(first) == 0 || first[0]&0x40 == 0 {
		t.Fatalf("the frame for a deflating connection is not compressed: %x", first[:min(8, len(first))])
	}
	want := r.sendOut(t, d2, r.sub, r.frames, nil)
	if got := r.sendOut(t, d2, r.sub, r.frames, &sf); !bytes.Equal(got, want) || !bytes.Equal(got, first) {
		t.Fatalf("the second deflating connection got %d bytes, its own frame is %d, the kept one %d", len(got), len(want), len(first))
	}
}

// TestSharedFrame checks that a worker's kept frame goes only to a
// delivery whose own frame would be the same bytes: the same messages,
// subscription id, codec and opcode, and no origin among them.
func TestSharedFrame(t *testing.T) {
	r := newDeliveryRig(t)
	sub := r.sub
	other := &Subscription{ID: "other", Channel: "bench", Cursor: sub.Cursor}
	tests := []struct {
		name   string
		conn   *Conn
		sub    *Subscription
		frames []store.Frame
		hit    bool
	}{
		{name: "same batch", conn: r.c, sub: sub, frames: r.frames, hit: true},
		{name: "other subscription id", conn: r.c, sub: other, frames: r.frames},
		{name: "fewer messages", conn: r.c, sub: sub, frames: r.frames[:15]},
		{name: "later first message", conn: r.c, sub: sub, frames: r.frames[1:]},
		{name: "other codec", conn: like(r.c, payload.Carrier, r.c.op), sub: sub, frames: r.frames},
		{name: "other opcode", conn: like(r.c, r.c.codecIndex, websocket.OpBinary), sub: sub, frames: r.frames},
		{name: "another connection alike", conn: like(r.c, r.c.codecIndex, r.c.op), sub: sub, frames: r.frames, hit: true},
		{name: "deflate negotiated", conn: deflating(t, r.c), sub: sub, frames: r.frames},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sf sharedFrames
			r.sendOut(t, r.c, sub, r.frames, &sf) // what a first delivery keeps
			kept := bytes.Clone(sf[r.c.codecIndex].frame)
			want := r.sendOut(t, tc.conn, tc.sub, tc.frames, nil)
			got := r.sendOut(t, tc.conn, tc.sub, tc.frames, &sf)
			if !bytes.Equal(got, want) {
				t.Fatalf("with the kept frame the delivery is\n%q\nwant\n%q", got, want)
			}
			if hit := bytes.Equal(got, kept); hit != tc.hit {
				t.Errorf("sent the kept frame: %v, want %v", hit, tc.hit)
			}
		})
	}
}

// TestSharedFrameOrigins checks that a batch with origins is never
// shared: which of its messages a connection gets depends on who it is.
func TestSharedFrameOrigins(t *testing.T) {
	r := newDeliveryRigFrom(t, func(c *Conn, i int) string {
		if i%2 == 0 {
			return c.id
		}
		return "other.1"
	})
	var sf sharedFrames
	copy(r.frames, r.stored)
	first := r.sendOut(t, r.c, r.sub, r.frames, &sf)
	if sf[r.c.codecIndex].first != nil {
		t.Fatal("a batch with origins was kept for sharing")
	}
	copy(r.frames, r.stored)
	if again := r.sendOut(t, r.c, r.sub, r.frames, &sf); !bytes.Equal(again, first) {
		t.Fatalf("second delivery %q, want %q", again, first)
	}
}

// TestSendDataSharedAllocs keeps the shared path at zero allocations.
func TestSendDataSharedAllocs(t *testing.T) {
	r := newDeliveryRig(t)
	var sf sharedFrames
	r.w.share = &sf
	defer func() { r.w.share = nil }()
	r.send(t) // kept, and the buffers grow once
	if n := testing.AllocsPerRun(100, func() { r.send(t) }); n != 0 {
		t.Errorf("sendData with a kept frame allocates %v times per batch, want 0", n)
	}
}

// BenchmarkSendDataShared is BenchmarkSendData for the subscribers after
// the first of a fan-out worker's batch: the kept frame is copied.
func BenchmarkSendDataShared(b *testing.B) {
	r := newDeliveryRig(b)
	var sf sharedFrames
	r.w.share = &sf
	b.ReportAllocs()
	for b.Loop() {
		r.send(b)
	}
}

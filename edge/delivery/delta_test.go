//go:build linux

package delivery

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/internal/wstest"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/fossil"
	"github.com/sluicehq/sluice/shared/rtm"
)

// unframe returns the payload of the one unmasked WebSocket frame in
// frame, as the edge writes them.
func unframe(tb testing.TB, frame []byte) []byte {
	tb.Helper()
	if len(frame) < 2 {
		tb.Fatalf("no frame: %x", frame)
	}
	n, at := int(frame[1]&0x7f), 2
	switch n {
	case 126:
		n, at = int(binary.BigEndian.Uint16(frame[2:])), 4
	case 127:
		n, at = int(binary.BigEndian.Uint64(frame[2:])), 10
	}
	if len(frame) != at+n {
		tb.Fatalf("%d bytes for a frame of %d", len(frame), at+n)
	}
	return frame[at:]
}

// TestDeltaPDUsOfChannel checks the data PDUs of delta subscribers of
// one channel with their own subscription ids, each sent one message at
// a time, whose PDUs share the channel's tail (deltaLog.appendDeltaPDU),
// whichever subscriber wrote it: each is the PDU a codec writes for its
// id and position with the message's delta, made apart by an Encoder of
// its own, and the delta rebuilds the message. A batch of two still
// goes as one PDU of two deltas.
func TestDeltaPDUsOfChannel(t *testing.T) {
	const n = 6
	msgs := make([]any, n)
	for i := range msgs {
		msgs[i] = feed2K(t, i)
	}
	r := newRig(t, wstest.ServerSide(t), msgs, nil)
	ids := []string{"a", "b", "c"}
	subs := make([]*Subscription, len(ids))
	for i, id := range ids {
		subs[i] = &Subscription{ID: id, Channel: "bench", Cursor: r.sub.Cursor}
		r.c.eng.WantDeltas(subs[i], "demo\x00bench")
		t.Cleanup(subs[i].EndDeltas)
		r.sendOut(t, r.c, subs[i], r.frames[:1], nil) // the first goes whole
	}
	epoch := r.sub.Cursor.Position().Epoch
	jsonOf := func(i int) []byte {
		m, err := payload.In(r.frames[i].Data, r.c.codecIndex)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var enc fossil.Encoder
	for i := 1; i < n; i++ {
		delta := enc.AppendCreate(nil, jsonOf(i-1), jsonOf(i))
		value, ok := json.Codec{}.AppendDelta(nil, delta)
		if !ok {
			t.Fatalf("delta %d is not a JSON string", i)
		}
		pos := rtm.Position{Epoch: epoch, Offset: r.frames[i].Offset + 1}
		order := []int{0, 1}
		if i%2 == 0 {
			order = []int{1, 0} // the tail written by either serves the other
		}
		for _, s := range order {
			got := unframe(t, r.sendOut(t, r.c, subs[s], r.frames[i:i+1], nil))
			want := json.Codec{}.AppendDeltaData(nil, ids[s], pos, [][]byte{value})
			if !bytes.Equal(got, want) {
				t.Fatalf("message %d to %s:\n%s\nwant\n%s", i, ids[s], got, want)
			}
		}
		if b, err := fossil.Apply(nil, jsonOf(i-1), delta, 1<<20); err != nil || !bytes.Equal(b, jsonOf(i)) {
			t.Fatalf("delta %d does not rebuild its message: %v", i, err)
		}
	}
	// c, two at a time: one PDU of two deltas, at the second's position.
	for i := 1; i+1 < n; i += 2 {
		var values [][]byte
		for j := i; j < i+2; j++ {
			v, _ := json.Codec{}.AppendDelta(nil, enc.AppendCreate(nil, jsonOf(j-1), jsonOf(j)))
			values = append(values, v)
		}
		pos := rtm.Position{Epoch: epoch, Offset: r.frames[i+1].Offset + 1}
		got := unframe(t, r.sendOut(t, r.c, subs[2], r.frames[i:i+2], nil))
		if want := (json.Codec{}).AppendDeltaData(nil, "c", pos, values); !bytes.Equal(got, want) {
			t.Fatalf("messages %d-%d to c:\n%s\nwant\n%s", i, i+1, got, want)
		}
	}
}

// TestDeltaPDUAllocs keeps a delta delivery at zero allocations, for
// the subscriber that computes the delta and for those that copy it.
func TestDeltaPDUAllocs(t *testing.T) {
	const n = 16
	msgs := make([]any, n)
	for i := range msgs {
		msgs[i] = feed2K(t, i)
	}
	r := newRig(t, wstest.ServerSide(t), msgs, nil)
	subs := []*Subscription{{ID: "a", Channel: "bench", Cursor: r.sub.Cursor}, {ID: "b", Channel: "bench", Cursor: r.sub.Cursor}}
	for _, s := range subs {
		r.c.eng.WantDeltas(s, "demo\x00bench")
		t.Cleanup(s.EndDeltas)
	}
	i := 0
	deliver := func() {
		for _, s := range subs {
			if err := r.c.sendData(r.w, s, r.frames[i%n:i%n+1]); err != nil {
				t.Fatal(err)
			}
			r.w.out = r.w.out[:0]
		}
		i++
	}
	for range n {
		deliver() // the buffers grow once
	}
	if a := testing.AllocsPerRun(100, deliver); a != 0 {
		t.Errorf("a delta delivery allocates %v times, want 0", a)
	}
}

// TestPDUHeadAndTail checks, for each codec that carries deltas, that a
// subscription's head and a message's tail are the codec's PDU, for ids
// and positions of every length class the codecs encode apart.
func TestPDUHeadAndTail(t *testing.T) {
	ids := []string{"", "a", "bench", `q"uo\te`, "é", strings.Repeat("x", 31), strings.Repeat("y", 32), strings.Repeat("z", 300)}
	positions := []rtm.Position{{}, {Epoch: 1, Offset: 9}, {Epoch: 1 << 40, Offset: 1 << 50}, {Epoch: ^uint64(0), Offset: ^uint64(0)}}
	deltas := [][][]byte{nil, {[]byte(`"d1"`)}, {[]byte(`"d1"`), []byte(`"d2"`)}}
	for ci := range payload.NumCodecs {
		enc, ok := payload.Codec(ci).(codec.DeltaEncoder)
		if !ok {
			continue
		}
		for _, id := range ids {
			head := pduHead(enc, ci, id)
			if head == nil {
				t.Fatalf("codec %d, id %q: the PDU does not split", ci, id)
			}
			for _, pos := range positions {
				for _, ds := range deltas {
					got := appendPDUTail(bytes.Clone(head), enc, ci, pos, ds)
					if want := enc.AppendDeltaData(nil, id, pos, ds); !bytes.Equal(got, want) {
						t.Fatalf("codec %d, id %q, %v: head and tail\n%q\nwant\n%q", ci, id, pos, got, want)
					}
				}
			}
		}
	}
}

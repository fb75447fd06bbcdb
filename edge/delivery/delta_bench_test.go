//go:build linux

package delivery

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/wstest"
)

// feed2K is the i-th message of a feed of 2 KiB JSON objects of which a
// few fields change: a time stamp and one price level's numbers.
func feed2K(tb testing.TB, i int) any {
	tb.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(object2K(1)), &v); err != nil {
		tb.Fatal(err)
	}
	v["ts"] = 1700000000000 + i*250
	lv := v["levels"].([]any)[i%8].(map[string]any)
	lv["size"], lv["orders"] = 1000+i, i%17
	return v
}

// BenchmarkDeliverDelta is the edge's cost of one delivery of a feed of
// 2 KiB objects (feed2K: one message per data PDU, JSON codec, without
// the system call), to each of 16 or 200 subscribers of the channel,
// whole (delta=off) or as deltas (delta=on: the first subscriber
// computes the delta of each message, the others copy it from the
// channel's delta log). With pdu=own each subscriber encodes its own
// PDU, as those of distinct subscription ids do; pdu=shared is a fan-out
// worker's pass over subscribers of the same id (the default: the
// channel's name), which copy the frame the first one encoded
// (shared.go). cpu-ns/op and wire-B are per delivery: wire-B is the
// frame on the wire.
func BenchmarkDeliverDelta(b *testing.B) {
	const feed = 64
	msgs := make([]any, feed)
	for i := range msgs {
		msgs[i] = feed2K(b, i)
	}
	for _, subs := range []int{16, 200} {
		for _, shared := range []bool{false, true} {
			for _, on := range []bool{false, true} {
				name := fmt.Sprintf("subs=%d/pdu=%s/delta=%s", subs,
					map[bool]string{false: "own", true: "shared"}[shared], map[bool]string{false: "off", true: "on"}[on])
				b.Run(name, func(b *testing.B) { benchDeliverDelta(b, msgs, subs, shared, on) })
			}
		}
	}
}

// benchDeliverDelta delivers msgs, one at a time, to subs subscribers
// of a channel, asking for deltas if on, in a worker's pass if shared.
func benchDeliverDelta(b *testing.B, msgs []any, subs int, shared, on bool) {
	feed := len(msgs)
	ws := wstest.ServerSide(b)
	r := newRig(b, ws, msgs, nil)
	if shared {
		var sf sharedFrames
		r.w.share = &sf
		b.Cleanup(func() { r.w.share = nil })
	}
	ss := make([]*Subscription, subs)
	for i := range ss {
		ss[i] = &Subscription{ID: "bench", Channel: "bench", Cursor: r.sub.Cursor}
		if on {
			r.c.eng.WantDeltas(ss[i], "demo\x00bench")
			b.Cleanup(ss[i].EndDeltas)
		}
	}
	deliver := func(i int) int {
		wire := 0
		for _, s := range ss {
			if err := r.c.sendData(r.w, s, r.frames[i:i+1]); err != nil {
				b.Fatal(err)
			}
			wire += len(r.w.out)
			r.w.out = r.w.out[:0]
		}
		return wire
	}
	for i := range feed {
		deliver(i) // buffers grow once
	}
	b.ReportAllocs()
	start := cpuTime(b)
	n, wire := 0, 0
	for b.Loop() {
		wire += deliver(1 + n%(feed-1)) // every message a delta against the one before
		n++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(n*subs), "cpu-ns/op")
	b.ReportMetric(float64(wire)/float64(n*subs), "wire-B")
}

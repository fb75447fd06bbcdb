//go:build linux

package delivery

import (
	"encoding/json"
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
// the system call), to each of 16 subscribers of the channel, whole
// ("off") or as deltas ("on": the first subscriber computes the delta of
// each message, the other 15 copy it from the channel's delta log).
// cpu-ns/op and wire-B are per delivery: wire-B is the frame on the
// wire.
func BenchmarkDeliverDelta(b *testing.B) {
	const feed, subs = 64, 16
	msgs := make([]any, feed)
	for i := range msgs {
		msgs[i] = feed2K(b, i)
	}
	for _, on := range []bool{false, true} {
		b.Run(map[bool]string{false: "off", true: "on"}[on], func(b *testing.B) {
			ws := wstest.ServerSide(b)
			r := newRig(b, ws, msgs, nil)
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
		})
	}
}

//go:build linux

package delivery

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/wstest"
	"github.com/sluicehq/sluice/shared/websocket"
)

// chatMessage is a chat message of about 110 bytes of JSON: with the
// data PDU around it the frame is some 210 bytes.
const chatMessage = `{"user":"alice","room":"lobby","ts":1700000000123,"text":"see you at the standup in five minutes, bring the notes"}`

// object2K is a JSON object of about 2 KiB, as a dashboard or market
// feed sends: numbers that change, keys that repeat.
func object2K(seed int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"symbol":"SLC%d","exchange":"XNAS","currency":"USD","ts":%d,"levels":[`, seed%97, 1700000000000+seed*137)
	x := uint32(seed*2654435761 + 1)
	for i := 0; b.Len() < 1960; i++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"price":%d.%02d,"size":%d,"orders":%d}`, 100+x%50, x%100, x%5000, x%17)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkDeliverDeflate is the edge's cost of one delivery (one
// message in its own data PDU, JSON codec, to one subscriber, without
// the system call) with permessage-deflate off, on at the default
// threshold, and on for every message; "shared" is a further subscriber
// of a fan-out worker, which copies the frame compressed for the first.
// wire-B is the frame on the wire.
func BenchmarkDeliverDeflate(b *testing.B) {
	for _, m := range []struct{ name, json string }{{"chat", chatMessage}, {"2KiB", object2K(1)}} {
		var v any
		if err := json.Unmarshal([]byte(m.json), &v); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []struct {
			name   string
			accept *websocket.DeflateOptions
			shared bool
		}{
			{"off", nil, false},
			{"threshold=default", &websocket.DeflateOptions{}, false},
			{"threshold=0", &websocket.DeflateOptions{Threshold: -1}, false},
			{"threshold=0/shared", &websocket.DeflateOptions{Threshold: -1}, true},
		} {
			b.Run(m.name+"/"+mode.name, func(b *testing.B) {
				ws := wstest.ServerSideWith(b, &websocket.AcceptOptions{Subprotocols: []string{"json"}, Deflate: mode.accept},
					&websocket.DialOptions{Subprotocols: []string{"json"}, Deflate: &websocket.DeflateOptions{}})
				r := newRig(b, ws, []any{v}, nil)
				if mode.shared {
					var sf sharedFrames
					r.w.share = &sf
					b.Cleanup(func() { r.w.share = nil })
				}
				r.send(b) // buffers grow once; a shared frame is kept
				b.ReportAllocs()
				start := cpuTime(b)
				n := 0
				for b.Loop() {
					r.send(b)
					n++
				}
				// CPU time, not the wall clock's: the figure holds on a
				// machine others load too.
				b.ReportMetric(float64(cpuTime(b)-start)/float64(n), "cpu-ns/op")
				b.ReportMetric(float64(r.wire), "wire-B")
			})
		}
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

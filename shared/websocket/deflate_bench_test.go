//go:build !js

package websocket

import (
	"bytes"
	"compress/flate"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// object2K is a JSON object of about 2 KiB, as a dashboard or market
// feed sends: fields and numbers that change from one message to the
// next, keys that repeat.
func object2K(seed int) []byte {
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
	return []byte(b.String())
}

// deflateSamples are the messages the deflate benchmarks send.
var deflateSamples = []struct {
	name    string
	payload []byte
}{
	{"chat", []byte(chatJSON)},
	{"2KiB", object2K(1)},
	{"random4KiB", random(4 << 10)}, // sent as it is: it does not shrink
}

// random is n bytes that do not compress.
func random(n int) []byte {
	b := make([]byte, n)
	x := uint32(1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// BenchmarkAppendDeflated lays out compressed frames (a server's, every
// message compressed) in a reused buffer: the cost of permessage-deflate
// per message on the edge's write path. It must not allocate; wire-B/msg
// is the frame's size.
func BenchmarkAppendDeflated(b *testing.B) {
	for _, s := range deflateSamples {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/deflate=%v", s.name, on), func(b *testing.B) {
				c := newConn(nil, nil, false, "")
				if on {
					c.setDeflate(&DeflateOptions{Threshold: -1})
				}
				buf := make([]byte, 0, 2*len(s.payload)+MaxHeader)
				b.SetBytes(int64(len(s.payload)))
				b.ReportAllocs()
				for b.Loop() {
					buf = c.AppendFrame(buf[:0], OpText, s.payload)
				}
				b.ReportMetric(float64(len(buf)), "wire-B/msg")
			})
		}
	}
}

// BenchmarkReadDeflated reads compressed messages a peer keeps sending
// into a reused buffer: the cost of inflating on the read path. It must
// not allocate.
func BenchmarkReadDeflated(b *testing.B) {
	for _, s := range deflateSamples {
		b.Run(s.name, func(b *testing.B) {
			c, p := deflateAcceptConn(b, nil)
			frame := wireFrame(true, 0x40, OpText, true, compress(b, s.payload))
			batch := bytes.Repeat(frame, max(1, (64<<10)/len(frame)))
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					if _, err := p.nc.Write(batch); err != nil {
						return
					}
				}
			})
			b.Cleanup(func() { c.CloseNow(); p.nc.Close(); wg.Wait() })
			dst := make([]byte, 0, len(s.payload))
			b.SetBytes(int64(len(s.payload)))
			b.ReportAllocs()
			for b.Loop() {
				_, msg, err := c.ReadMessage(dst)
				if err != nil || len(msg) != len(s.payload) {
					b.Fatalf("ReadMessage = %d bytes, %v", len(msg), err)
				}
				dst = msg
			}
		})
	}
}

// BenchmarkDeflateLevel compresses the samples at each level, as
// deflateLevel's choice was measured: time per message and the ratio.
func BenchmarkDeflateLevel(b *testing.B) {
	for _, s := range deflateSamples {
		for _, level := range []int{flate.BestSpeed, flate.DefaultCompression, flate.BestCompression} {
			b.Run(fmt.Sprintf("%s/level=%d", s.name, level), func(b *testing.B) {
				var out bytes.Buffer
				fw, _ := flate.NewWriter(&out, level)
				b.SetBytes(int64(len(s.payload)))
				for b.Loop() {
					out.Reset()
					fw.Reset(&out)
					fw.Write(s.payload)
					fw.Flush()
				}
				b.ReportMetric(float64(out.Len()-4)/float64(len(s.payload)), "ratio")
			})
		}
	}
}

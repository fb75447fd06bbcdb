//go:build !js

package websocket

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkWriteFrames is the fan-out path: 16 frames of 128 bytes laid
// out in a reused buffer and sent with one Write to a peer that discards
// them. It must not allocate.
func BenchmarkWriteFrames(b *testing.B) {
	for _, r := range roles {
		b.Run(r.name, func(b *testing.B) {
			c, p := r.conn(b)
			var wg sync.WaitGroup
			wg.Go(func() {
				buf := make([]byte, 64<<10)
				for {
					if _, err := p.br.Read(buf); err != nil {
						return
					}
				}
			})
			b.Cleanup(func() { c.CloseNow(); wg.Wait() })
			batch := newFrameBatch(b)
			for b.Loop() {
				if err := c.Write(batch.append(c)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendFrames is the CPU side of BenchmarkWriteFrames without
// the system call, where a client's masking (key and XOR) shows: 16
// frames of 128 bytes laid out in a reused buffer. It must not allocate.
func BenchmarkAppendFrames(b *testing.B) {
	for _, client := range []bool{false, true} {
		name := map[bool]string{false: "server", true: "client"}[client]
		b.Run(name, func(b *testing.B) {
			c := newConn(nil, nil, client, "")
			batch := newFrameBatch(b)
			for b.Loop() {
				batch.append(c)
			}
		})
	}
}

// frameBatch is what the write benchmarks lay out each time: 16 frames of
// 128 bytes, in a buffer reused from one time to the next.
type frameBatch struct{ payload, buf []byte }

// newFrameBatch returns the batch and reports its bytes and allocations.
func newFrameBatch(b *testing.B) *frameBatch {
	payload := bytes.Repeat([]byte{'x'}, 128)
	b.SetBytes(16 * int64(len(payload)))
	b.ReportAllocs()
	return &frameBatch{payload: payload, buf: make([]byte, 0, 16*(MaxHeader+len(payload)))}
}

// append lays the frames out as c writes them and returns them.
func (f *frameBatch) append(c *Conn) []byte {
	f.buf = f.buf[:0]
	for range 16 {
		f.buf = c.AppendFrame(f.buf, OpBinary, f.payload)
	}
	return f.buf
}

// BenchmarkReadMessage reads messages a peer keeps sending into a reused
// buffer. It must not allocate.
func BenchmarkReadMessage(b *testing.B) {
	for _, r := range roles {
		for _, size := range []int{128, 16 << 10} {
			b.Run(fmt.Sprintf("%s/%d", r.name, size), func(b *testing.B) {
				c, p := r.conn(b)
				c.SetReadLimit(1 << 20)
				frame := wireFrame(true, 0, OpBinary, p.client, bytes.Repeat([]byte{'y'}, size))
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
				dst := make([]byte, 0, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					op, msg, err := c.ReadMessage(dst)
					if err != nil || op != OpBinary || len(msg) != size {
						b.Fatalf("ReadMessage = %d, %d bytes, %v", op, len(msg), err)
					}
					dst = msg
				}
			})
		}
	}
}

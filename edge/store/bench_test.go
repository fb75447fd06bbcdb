package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// benchmarkAppend appends size-byte messages to one channel, through a
// Channel handle (the publish path) or by name.
func benchmarkAppend(b *testing.B, size int, byName bool) {
	s := New(nil)
	defer s.Close()
	h := s.Channel("bench")
	data := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if byName {
			_, err = s.Append("bench", data)
		} else {
			_, err = h.Append(data)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend64(b *testing.B)       { benchmarkAppend(b, 64, false) }
func BenchmarkAppend64ByName(b *testing.B) { benchmarkAppend(b, 64, true) }
func BenchmarkAppend1K(b *testing.B)       { benchmarkAppend(b, 1024, false) }

// A reader of BenchmarkAppendWithReaders reads as edge/server's writer
// does: into a buffer of readerBatchFrames frames, at most
// readerBatchBytes (maxBatchBytes there: one rtm/subscription/data).
const (
	readerBatchFrames = 64
	readerBatchBytes  = 64 << 10
)

// BenchmarkAppendWithReaders measures the writer (appending through a
// Channel handle) while readers follow the tail as the edge's connection
// writers do: Wait, then Read into a reused buffer, at most
// readerBatchBytes a Read; the clock stops once every reader has caught
// up. reader-frames/s is what all readers together read.
func BenchmarkAppendWithReaders(b *testing.B) {
	for _, n := range []int{0, 1, 8, 64} {
		b.Run(fmt.Sprintf("readers=%d", n), func(b *testing.B) {
			s := New(nil)
			defer s.Close()
			h := s.Channel("bench")
			data := make([]byte, 64)
			var last atomic.Uint64 // final offset, set when the writer is done
			var frames, missed atomic.Uint64
			// Each reader waits on its own waker, as a subscriber does:
			// a channel shared by all would contend in select.
			wakers := make([]chanWaker, n)
			var wg sync.WaitGroup
			for i := range n {
				c, err := s.Subscribe("bench", Start{})
				if err != nil {
					b.Fatal(err)
				}
				wakers[i] = newWaker()
				wg.Go(func() {
					defer c.Close()
					f, m := followTail(c, &last, wakers[i])
					frames.Add(f)
					missed.Add(m)
				})
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var p rtm.Position
			for range b.N {
				var err error
				if p, err = h.Append(data); err != nil {
					b.Fatal(err)
				}
			}
			last.Store(p.Offset)
			for _, w := range wakers {
				w.Wake() // a reader may have armed before last was set
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			if n == 0 {
				return
			}
			b.ReportMetric(float64(frames.Load())/elapsed.Seconds(), "reader-frames/s")
			if m := missed.Load(); m > 0 {
				b.ReportMetric(float64(m)/float64(n*b.N), "missed/frame")
			}
		})
	}
}

// followTail follows a cursor with Wait(w) to the end: it returns the
// frames it read and missed once it is past the offset in last (set when
// the writer is done, which then wakes w).
func followTail(c *Cursor, last *atomic.Uint64, w chanWaker) (frames, missed uint64) {
	buf := make([]Frame, 0, readerBatchFrames)
	for {
		var err error
		buf, err = c.Read(buf[:0], readerBatchBytes)
		if errors.Is(err, ErrOutOfSync) {
			m, _ := c.FastForward()
			missed += m
			continue
		}
		frames += uint64(len(buf))
		if len(buf) > 0 {
			continue
		}
		if l := last.Load(); l != 0 && c.Position().Offset > l {
			return frames, missed
		}
		if c.Wait(w) {
			<-w
		}
	}
}

// BenchmarkRead is one cursor reading stored 64-byte messages; an op is a
// frame.
func BenchmarkRead(b *testing.B) {
	const stored = 5000
	s := New(nil)
	defer s.Close()
	data := make([]byte, 64)
	for range stored {
		if _, err := s.Append("bench", data); err != nil {
			b.Fatal(err)
		}
	}
	first := rtm.Position{Epoch: s.Next("bench").Epoch, Offset: 1}
	open := func() *Cursor {
		c, err := s.Subscribe("bench", Start{Position: &first})
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	c := open()
	buf := make([]Frame, 0, 256)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; {
		var err error
		if buf, err = c.Read(buf[:0], 0); err != nil {
			b.Fatal(err)
		}
		if len(buf) == 0 {
			b.StopTimer()
			c.Close()
			c = open()
			b.StartTimer()
		}
		n += len(buf)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	c.Close()
}

// BenchmarkReadAt is Store.Read at a stored position (rtm/read): a binary
// search over the blocks, then a scan within one.
func BenchmarkReadAt(b *testing.B) {
	const stored = 100000
	s := New(nil)
	defer s.Close()
	data := make([]byte, 64)
	for range stored {
		if _, err := s.Append("bench", data); err != nil {
			b.Fatal(err)
		}
	}
	e := s.Next("bench").Epoch
	b.ReportAllocs()
	i := uint64(0)
	for b.Loop() {
		i = (i + 7919) % stored
		p := rtm.Position{Epoch: e, Offset: 1 + i}
		if f, ok, err := s.Read("bench", &p); err != nil || !ok || f.Offset != p.Offset {
			b.Fatal("not found")
		}
	}
}

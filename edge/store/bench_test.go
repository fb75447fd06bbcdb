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

func benchmarkAppend(b *testing.B, size int) {
	s := New(nil)
	defer s.Close()
	data := make([]byte, size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Append("bench", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend64(b *testing.B) { benchmarkAppend(b, 64) }
func BenchmarkAppend1K(b *testing.B) { benchmarkAppend(b, 1024) }

// BenchmarkAppendWithReaders measures the writer while readers follow the
// tail with Wait and Read; the clock stops once every reader has caught up.
// reader-frames/s is what all readers together read.
func BenchmarkAppendWithReaders(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("readers=%d", n), func(b *testing.B) {
			s := New(nil)
			defer s.Close()
			data := make([]byte, 64)
			var last atomic.Uint64 // final offset, set when the writer is done
			var frames, missed atomic.Uint64
			done := make(chan struct{})
			var wg sync.WaitGroup
			for range n {
				c, err := s.Subscribe("bench", Start{})
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					defer c.Close()
					f, m := follow1(c, &last, done)
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
				if p, err = s.Append("bench", data); err != nil {
					b.Fatal(err)
				}
			}
			last.Store(p.Offset)
			close(done)
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(frames.Load())/elapsed.Seconds(), "reader-frames/s")
			if m := missed.Load(); m > 0 {
				b.ReportMetric(float64(m)/float64(n*b.N), "missed/frame")
			}
		})
	}
}

// follow1 reads c until it is past the offset in last (once done is
// closed), and returns the frames read and missed.
func follow1(c *Cursor, last *atomic.Uint64, done <-chan struct{}) (frames, missed uint64) {
	w := newWaker()
	buf := make([]Frame, 0, 1024)
	for {
		var err error
		buf, err = c.Read(buf[:0], 1<<20)
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
			select {
			case <-w:
			case <-done:
			}
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

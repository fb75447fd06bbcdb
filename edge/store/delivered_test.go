package store

import (
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMarkDeliveredFirstOnly(t *testing.T) {
	s := New(&Options{Clock: newFakeClock(), SweepInterval: -1})
	defer s.Close()
	a, err := s.Subscribe("ch", Start{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Subscribe("ch", Start{})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct {
		name string
		cur  *Cursor
		upTo uint64
		want uint64
	}{
		{name: "first subscriber, messages 1-3", cur: a, upTo: 3, want: 0},
		{name: "second subscriber, same messages", cur: b, upTo: 3, want: 3},
		{name: "second subscriber first to 5", cur: b, upTo: 5, want: 3},
		{name: "first subscriber behind", cur: a, upTo: 4, want: 5},
	} {
		if got := step.cur.MarkDelivered(step.upTo); got != step.want {
			t.Fatalf("%s: MarkDelivered(%d) = %d, want %d", step.name, step.upTo, got, step.want)
		}
	}
	// Another channel has its own mark.
	c, err := s.Subscribe("other", Start{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.MarkDelivered(1); got != 0 {
		t.Fatalf("other channel: MarkDelivered(1) = %d, want 0", got)
	}
}

func TestMarkDeliveredConcurrent(t *testing.T) {
	s := New(&Options{SweepInterval: -1})
	defer s.Close()
	const subscribers, messages = 8, 1000
	firsts := make([]int, messages+1) // how often each offset was reported first
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range subscribers {
		cur, err := s.Subscribe("ch", Start{Position: &rtm.Position{Epoch: s.Next("ch").Epoch, Offset: 1}})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for off := uint64(1); off <= messages; off++ {
				prev := cur.MarkDelivered(off)
				mu.Lock()
				for o := prev + 1; o <= off; o++ {
					firsts[o]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for o := 1; o <= messages; o++ {
		if firsts[o] != 1 {
			t.Fatalf("offset %d reported first %d times, want exactly once", o, firsts[o])
		}
	}
}

func TestNowIsTheStoreClock(t *testing.T) {
	clock := newFakeClock()
	s := New(&Options{Clock: clock, SweepInterval: -1})
	defer s.Close()
	if _, err := s.Append("ch", []byte("x")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(250 * time.Millisecond)
	f, found, err := s.Read("ch", nil)
	if err != nil || !found {
		t.Fatalf("Read: %v %v", found, err)
	}
	if got := time.Duration(s.Now() - f.Time); got != 250*time.Millisecond {
		t.Fatalf("Now() - Frame.Time = %v, want the 250ms the clock moved", got)
	}
}

// TestStampOrdersAppends: with the real, coarse clock (which lags Now), a
// Stamp taken before an append is never after the message's Time, and
// one taken after is never before it, so Stamp tells messages stored
// before a point from those stored after it.
func TestStampOrdersAppends(t *testing.T) {
	s := New(&Options{SweepInterval: time.Millisecond, TimeResolution: 10 * time.Millisecond})
	defer s.Close()
	for i := range 200 {
		before := s.Stamp()
		if _, err := s.Append("ch", []byte("x")); err != nil {
			t.Fatal(err)
		}
		after := s.Stamp()
		f, found, err := s.Read("ch", nil)
		if err != nil || !found {
			t.Fatalf("Read: %v %v", found, err)
		}
		if f.Time < before || f.Time > after {
			t.Fatalf("append %d: Time %d outside the stamps around it [%d, %d]", i, f.Time, before, after)
		}
	}
}

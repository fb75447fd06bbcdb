package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// TestChannelHandleAcrossForgetting: a handle outlives its channel's
// incarnation; its next append creates the new one, readable at once.
func TestChannelHandleAcrossForgetting(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{Retention: noHistory(time.Second, -1)})
	h := s.Channel("c")
	if h.Name() != "c" || s.lookup("c") != nil {
		t.Fatal("Channel created the channel before an append")
	}
	p1, err := h.Append([]byte("one"))
	if err != nil || p1.Offset != 1 {
		t.Fatalf("first append: %v, %v", p1, err)
	}
	if p, _ := s.Append("c", []byte("two")); p != p1.Next() {
		t.Fatalf("Store.Append after the handle's: %v, want %v", p, p1.Next())
	}
	clk.Advance(2 * time.Second)
	s.Sweep()
	if st := s.Stats(); st.Channels != 0 || st.Appends != 2 {
		t.Fatalf("after expiry: %+v, want the channel forgotten, 2 appends", st)
	}
	p3, err := h.Append([]byte("three"))
	if err != nil || p3.Epoch == p1.Epoch || p3.Offset != 1 {
		t.Fatalf("append after forgetting: %v, %v; want a new epoch than %v, offset 1", p3, err, p1)
	}
	if f, ok, err := s.Read("c", &p3); err != nil || !ok || string(f.Data) != "three" {
		t.Fatalf("Read(%v) = %q, %v, %v", p3, f.Data, ok, err)
	}
	if _, _, err := s.Read("c", &p1); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read at the forgotten epoch: %v", err)
	}
	if n := s.Next("c"); n != p3.Next() {
		t.Fatalf("Next = %v, want %v: the handle wrote elsewhere", n, p3.Next())
	}
	if st := s.Stats(); st.Channels != 1 || st.Appends != 3 {
		t.Fatalf("stats %+v, want 1 channel, 3 appends", st)
	}
}

func TestChannelHandleErrors(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{ChannelBytes: 100})
	h := s.Channel("c")
	if _, err := h.AppendAt(5, clk.Now(), []byte("x")); err != nil {
		t.Fatalf("AppendAt(5): %v", err)
	}
	closed := New(&Options{SweepInterval: -1})
	_ = closed.Close()
	tests := []struct {
		name   string
		append func() (rtm.Position, error)
		want   error
	}{
		{"offset 0", func() (rtm.Position, error) { return h.AppendAt(0, clk.Now(), nil) }, ErrOffsetOrder},
		{"offset not above", func() (rtm.Position, error) { return h.AppendAt(5, clk.Now(), nil) }, ErrOffsetOrder},
		{"too large", func() (rtm.Position, error) { return h.Append(make([]byte, 100)) }, ErrTooLarge},
		{"closed", func() (rtm.Position, error) { return closed.Channel("c").Append(nil) }, ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.append(); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if p, err := h.Append(nil); err != nil || p.Offset != 6 {
		t.Fatalf("append after the errors: %v, %v; want offset 6", p, err)
	}
}

// TestChannelHandleRacesForgetting: goroutines sharing one handle (and one
// appending by name) race sweeps that forget the channel over and over.
// Every acknowledged append lands in a live incarnation: each epoch's
// offsets are exactly 1..n, and the store counts every append.
func TestChannelHandleRacesForgetting(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{Retention: noHistory(time.Nanosecond, -1)})
	h := s.Channel("c")
	done := make(chan struct{})
	var sweeper sync.WaitGroup
	sweepUntil(&sweeper, s, clk, done)
	const writers = 4
	acked := make([][]rtm.Position, writers)
	errc := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			ps, err := appendUntilForgotten(s, h, w == 0)
			acked[w] = ps
			errc <- err
		})
	}
	wg.Wait()
	close(done)
	sweeper.Wait()
	checkErrs(t, errc)
	byEpoch := map[uint64][]uint64{}
	total := 0
	for _, ps := range acked {
		for _, p := range ps {
			byEpoch[p.Epoch] = append(byEpoch[p.Epoch], p.Offset)
			total++
		}
	}
	for e, offs := range byEpoch {
		slices.Sort(offs)
		if !equalOffsets(offs, seq(1, uint64(len(offs)))) {
			t.Fatalf("epoch %d: offsets %v..., want 1..%d each once", e, offs[:min(len(offs), 10)], len(offs))
		}
	}
	if st := s.Stats(); st.Appends != uint64(total) {
		t.Fatalf("appends counted %d, acknowledged %d", st.Appends, total)
	}
}

// appendUntilForgotten appends through h (or by name) at least 1000 times
// and until it has seen 10 epochs, and returns the positions.
func appendUntilForgotten(s *Store, h *Channel, byName bool) ([]rtm.Position, error) {
	var out []rtm.Position
	epochs := 0
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 1000 || epochs < 10; i++ {
		if time.Now().After(deadline) {
			return out, fmt.Errorf("%d epochs in 20s: the channel was not forgotten", epochs)
		}
		var p rtm.Position
		var err error
		if byName {
			p, err = s.Append(h.Name(), nil)
		} else {
			p, err = h.Append(nil)
		}
		if err != nil {
			return out, err
		}
		if len(out) == 0 || p.Epoch != out[len(out)-1].Epoch {
			epochs++
		}
		out = append(out, p)
	}
	return out, nil
}

// TestChannelHandleConcurrent: writers sharing a handle, a follower with
// Read: it gets every message once, each writer's in its order.
func TestChannelHandleConcurrent(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, &Options{BlockBytes: 256, FirstBlockBytes: 64})
	h := s.Channel("c")
	c := mustSubscribe(t, s, "c", Start{})
	const writers, per = 4, 2000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range per {
				var d [8]byte
				binary.LittleEndian.PutUint32(d[:], uint32(w))
				binary.LittleEndian.PutUint32(d[4:], uint32(i))
				if _, err := h.Append(d[:]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	defer wg.Wait()
	next := make([]uint32, writers)
	w := newWaker()
	buf := make([]Frame, 0, 64)
	for n := 0; n < writers*per; {
		var err error
		if buf, err = c.Read(buf[:0], 0); err != nil {
			t.Fatal(err)
		}
		for _, f := range buf {
			id, i := binary.LittleEndian.Uint32(f.Data), binary.LittleEndian.Uint32(f.Data[4:])
			if f.Offset != uint64(n+1) || id >= writers || i != next[id] {
				t.Fatalf("frame %d: writer %d message %d, want offset %d", f.Offset, id, i, n+1)
			}
			next[id]++
			n++
		}
		if len(buf) == 0 && c.Wait(w) {
			select {
			case <-w:
			case <-time.After(10 * time.Second):
				t.Fatalf("no frame after %d of %d", n, writers*per)
			}
		}
	}
}

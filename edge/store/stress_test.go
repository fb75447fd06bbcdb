package store

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestConcurrentStress runs writers, followers, one-shot readers, churning
// subscriptions and a sweeper at once, with limits small enough to evict
// and a TTL short enough to expire, and checks what readers observe:
// complete frames, offsets increasing, losses reported as out of sync.
func TestConcurrentStress(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{
		BlockBytes: 512, FirstBlockBytes: 128, ChannelBytes: 4 << 10, StoreBytes: 8 << 10,
		Retention: func(string) Retention {
			return Retention{TTL: 50 * time.Millisecond, Grace: 20 * time.Millisecond, HistoryCount: 2, HistoryAge: time.Second}
		},
	})
	names := []string{"a", "b", "c"}
	const perWriter = 4000
	errc := make(chan error, 64)
	done := make(chan struct{})
	var writers, others sync.WaitGroup
	for i, name := range names {
		writers.Go(func() {
			// The writer seals each payload with the offset Next gave:
			// its own cursor keeps the channel from being forgotten (a
			// drained one goes at once) between that Next and the Append.
			keep, err := s.Subscribe(name, Start{})
			if err != nil {
				errc <- err
				return
			}
			defer keep.Close()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			for j := range perWriter {
				p := s.Next(name)
				if _, err := s.Append(name, sealedPayload(p.Offset, r)); err != nil {
					errc <- err
					return
				}
				if j%50 == 0 {
					clk.Advance(time.Millisecond)
				}
			}
		})
	}
	for _, name := range names {
		// One follower reads in small batches, one takes all that is ready.
		for _, maxBytes := range []int{1024, 0} {
			others.Go(func() { errc <- followLossy(s, name, done, maxBytes) })
		}
		others.Go(func() { errc <- churn(s, name, done) })
	}
	sweepUntil(&others, s, nil, done)
	writers.Wait()
	close(done)
	others.Wait()
	checkErrs(t, errc)
	st := s.Stats()
	if st.Appends != uint64(len(names)*perWriter) || st.Bytes > 8<<10+512 {
		t.Fatalf("stats %+v", st)
	}
}

// followLossy follows a channel until done, reading at most maxBytes a
// Read, fast-forwarding when out of sync, and checks every frame.
func followLossy(s *Store, name string, done <-chan struct{}, maxBytes int) error {
	c, err := s.Subscribe(name, Start{HistoryCount: 10})
	if err != nil {
		return err
	}
	defer c.Close()
	w := newWaker()
	var buf []Frame
	var prev uint64
	for {
		buf, err = c.Read(buf[:0], maxBytes)
		var oos *OutOfSyncError
		if errors.As(err, &oos) {
			if oos.Position.Offset <= prev || oos.Head.Offset <= oos.Position.Offset && oos.Missed > 0 {
				return fmt.Errorf("out of sync %+v after %d", *oos, prev)
			}
			c.FastForward()
			continue
		}
		if err != nil {
			return err
		}
		for _, f := range buf {
			if f.Offset <= prev {
				return fmt.Errorf("offset %d after %d", f.Offset, prev)
			}
			if err := checkSealed(f); err != nil {
				return err
			}
			prev = f.Offset
		}
		if len(buf) == 0 && c.Wait(w) {
			select {
			case <-w:
			case <-done:
				return nil
			}
		}
	}
}

// churn opens and closes cursors and reads positions until done.
func churn(s *Store, name string, done <-chan struct{}) error {
	for i := 0; ; i++ {
		select {
		case <-done:
			return nil
		default:
		}
		p := s.Next(name)
		p.Offset -= uint64(i % 5)
		if f, ok, err := s.Read(name, &p); err == nil && ok {
			if err := checkSealed(f); err != nil {
				return err
			}
		} else if err != nil && !errors.Is(err, ErrExpired) {
			return err
		}
		c, err := s.Subscribe(name, Start{Position: &p})
		if err == nil {
			if _, err := c.Read(nil, 0); err != nil && !errors.Is(err, ErrOutOfSync) {
				return err
			}
			c.Close()
		} else if !errors.Is(err, ErrExpired) {
			return err
		}
	}
}

// TestConcurrentDrain: appenders spray many channels under a store limit
// so small that each new block drains (and forgets) others, while
// one-shot readers and short-lived cursors race on the same channels:
// every frame read is whole and of its channel, and losses are reported
// as out of sync or expired, never as a wrong or broken frame.
func TestConcurrentDrain(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{BlockBytes: 256, FirstBlockBytes: 64, StoreBytes: 4 << 10})
	const channels, perWriter = 64, 5000
	name := func(r *rand.Rand) string { return fmt.Sprintf("drain-%02d", r.IntN(channels)) }
	check := func(ch string, f Frame) error {
		if string(f.Data) != ch {
			return fmt.Errorf("channel %s: frame %d holds %q", ch, f.Offset, f.Data)
		}
		return nil
	}
	errc := make(chan error, 8)
	done := make(chan struct{})
	var writers, readers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range perWriter {
				ch := name(r)
				if _, err := s.Append(ch, []byte(ch)); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	readers.Go(func() { // one-shot reads of the newest and of a position
		r := rand.New(rand.NewPCG(3, 9))
		for {
			select {
			case <-done:
				errc <- nil
				return
			default:
			}
			ch := name(r)
			if f, ok, err := s.Read(ch, nil); err != nil || ok && check(ch, f) != nil {
				errc <- fmt.Errorf("Read(%s, newest) = %v, %v: %v", ch, ok, err, check(ch, f))
				return
			}
			p, ok := s.Peek(ch)
			if !ok || p.Offset < 2 {
				continue
			}
			p.Offset--
			f, ok, err := s.Read(ch, &p)
			if err != nil && !errors.Is(err, ErrExpired) || ok && check(ch, f) != nil {
				errc <- fmt.Errorf("Read(%s, %v) = %v, %v: %v", ch, p, ok, err, check(ch, f))
				return
			}
		}
	})
	readers.Go(func() { // cursors that keep drained channels for a while
		r := rand.New(rand.NewPCG(4, 9))
		var buf []Frame
		for {
			select {
			case <-done:
				errc <- nil
				return
			default:
			}
			ch := name(r)
			c, err := s.Subscribe(ch, Start{HistoryCount: 2})
			if err != nil {
				errc <- err
				return
			}
			for range 3 {
				buf, err = c.Read(buf[:0], 0)
				if errors.Is(err, ErrOutOfSync) {
					c.FastForward()
					continue
				}
				for _, f := range buf {
					if err := check(ch, f); err != nil {
						errc <- err
						c.Close()
						return
					}
				}
			}
			c.Close()
		}
	})
	sweepUntil(&readers, s, nil, done)
	writers.Wait()
	close(done)
	readers.Wait()
	checkErrs(t, errc)
	// Channels the cursors alone made linger TTL + grace for resuming
	// subscribers (counted, not evictable); past that they go too.
	clk.Advance(DefaultTTL + DefaultGrace + time.Second)
	s.Sweep()
	if st := s.Stats(); st.Memory > 4<<10+2*blockCost(256)+channelCost("drain-00") { // a block per appender racing
		t.Fatalf("stats %+v: past the limit", st)
	}
}

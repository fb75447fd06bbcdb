package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// funcWaker calls its function on Wake.
type funcWaker func()

func (f funcWaker) Wake() { f() }

// TestAppendDoesNotCallWakers: a slow Waker does not hold up the
// publisher, because the notifier goroutine calls it, not Append. (When
// Append called Wakers itself, this Append blocked until the deadline.)
func TestAppendDoesNotCallWakers(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	appended := make(chan struct{})
	var calls, stalled atomic.Int32
	slow := funcWaker(func() {
		calls.Add(1)
		select {
		case <-appended:
		case <-ctx.Done():
			stalled.Add(1)
		}
	})
	c := mustSubscribe(t, s, "c", Start{})
	if !c.Wait(slow) {
		t.Fatal("Wait on an empty channel did not arm")
	}
	mustAppend(t, s, "c", []byte("x"))
	close(appended)
	settle(t, s, "c")
	if n := stalled.Load(); n != 0 {
		t.Fatal("Append returned only after its reader's Waker did")
	}
	if n := calls.Load(); n != 1 {
		t.Fatalf("Waker called %d times, want 1", n)
	}
}

// TestCloseWaitsForWakeRound: a cursor closed while a wake round that
// took its Waker is in progress is not woken after Close returns.
func TestCloseWaitsForWakeRound(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	first := mustSubscribe(t, s, "c", Start{})
	second := mustSubscribe(t, s, "c", Start{})
	closeDone := make(chan struct{})
	var closeReturned, late atomic.Bool
	// A round wakes cursors in the order they armed: first's Waker runs
	// while the round holds second's. It closes second and gives Close
	// every chance to return before the round reaches second's Waker.
	closer := funcWaker(func() {
		go func() {
			second.Close()
			closeReturned.Store(true)
			close(closeDone)
		}()
		for range 1000 {
			select {
			case <-closeDone:
				return
			default:
				runtime.Gosched()
			}
		}
	})
	victim := funcWaker(func() {
		if closeReturned.Load() {
			late.Store(true)
		}
	})
	if !first.Wait(closer) || !second.Wait(victim) {
		t.Fatal("Wait on an empty channel did not arm")
	}
	mustAppend(t, s, "c", []byte("x"))
	select {
	case <-closeDone:
	case <-t.Context().Done():
	}
	settle(t, s, "c") // the round may outlast a Close that did not wait
	if late.Load() {
		t.Fatal("Waker called after Cursor.Close returned")
	}
}

// TestWakesAcrossStoreClose: wakes queued by appends before Close are
// delivered by the time Close returns, and an append that was admitted
// before Close but commits after it (simulated by committing directly)
// wakes its readers itself.
func TestWakesAcrossStoreClose(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	c := mustSubscribe(t, s, "c", Start{})
	w := newWaker()
	if !c.Wait(w) {
		t.Fatal("Wait on an empty channel did not arm")
	}
	mustAppend(t, s, "c", []byte("x"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if !w.woken() {
		t.Fatal("an append before Close did not wake its reader by the time Close returned")
	}
	if got := offsets(t, c); !equalOffsets(got, []uint64{1}) {
		t.Fatalf("read %v, want 1", got)
	}
	if !c.Wait(w) {
		t.Fatal("Wait after reading everything did not arm")
	}
	if _, ok, err := s.lookup("c").commit(0, s.Now(), false, "", []byte("y")); !ok || err != nil {
		t.Fatalf("commit after Close: ok=%v, %v", ok, err)
	}
	if !w.woken() {
		t.Fatal("an append racing Close did not wake its reader")
	}
}

// TestNoLostWakeups hammers the notifier: on each of several channels,
// writers append bursts (their appends racing the notifier's rounds) and
// wait until every reader has read their last message before the next
// burst, so that every burst's last append must wake whoever armed; other
// cursors arm and close meanwhile, and no Waker may run after its
// cursor's Close returned. A lost wake-up stalls a writer until the
// deadline.
func TestNoLostWakeups(t *testing.T) {
	t.Parallel()
	const channels, writers, readers, bursts = 4, 2, 3, 1500
	s, _ := newTestStore(t, &Options{FirstBlockBytes: 256, BlockBytes: 4 << 10})
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var total uint64 // messages per channel
	for k := range bursts {
		total += writers * burstSize(k)
	}
	errc := make(chan error, channels*(readers+writers+1))
	var wg, appenders sync.WaitGroup
	done := make(chan struct{}) // closed when every writer is done
	for i := range channels {
		name := fmt.Sprintf("c%d", i)
		fs := make([]*ackReader, readers)
		for r := range fs {
			fs[r] = newAckReader(mustSubscribe(t, s, name, Start{}), writers)
			wg.Go(func() { errc <- fs[r].followTo(ctx, total) })
		}
		for j := range writers {
			appenders.Go(func() { errc <- appendBursts(ctx, s, name, j, bursts, fs) })
		}
		wg.Go(func() { errc <- armAndClose(ctx, s, name, done) })
	}
	appenders.Wait()
	close(done)
	wg.Wait()
	checkErrs(t, errc)
}

// burstSize is the number of messages of burst k.
func burstSize(k int) uint64 { return 1 + uint64(k%4) }

// appendBursts appends bursts to channel name (writer 0 through a
// Channel handle, others by name), waiting after each until every
// follower has read it.
func appendBursts(ctx context.Context, s *Store, name string, writer, bursts int, fs []*ackReader) error {
	h := s.Channel(name)
	for k := range bursts {
		var p rtm.Position
		var err error
		for range burstSize(k) {
			if writer == 0 {
				p, err = h.Append(payload(k, 8))
			} else {
				p, err = s.Append(name, payload(k, 8))
			}
			if err != nil {
				return err
			}
		}
		for _, f := range fs {
			for f.read.Load() < p.Offset {
				select {
				case <-f.progress[writer]:
				case <-ctx.Done():
					return fmt.Errorf("lost wake-up: a reader of %q at %d never read %d: %w",
						name, f.read.Load(), p.Offset, ctx.Err())
				}
			}
		}
	}
	return nil
}

// ackReader reads a cursor to the end and tells each writer of its
// progress.
type ackReader struct {
	c        *Cursor
	read     atomic.Uint64 // the last offset read
	progress []chanWaker   // one per writer, woken after read grows
}

func newAckReader(c *Cursor, writers int) *ackReader {
	f := &ackReader{c: c, progress: make([]chanWaker, writers)}
	for i := range f.progress {
		f.progress[i] = newWaker()
	}
	return f
}

// followTo reads with Read, waiting with Wait when nothing is ready,
// until it has read offset last.
func (f *ackReader) followTo(ctx context.Context, last uint64) error {
	w := newWaker()
	buf := make([]Frame, 0, 64)
	for f.read.Load() < last {
		var err error
		if buf, err = f.c.Read(buf[:0], 0); err != nil {
			return err
		}
		if len(buf) > 0 {
			f.read.Store(buf[len(buf)-1].Offset)
			for _, p := range f.progress {
				p.Wake()
			}
			continue
		}
		if f.c.Wait(w) {
			select {
			case <-w:
			case <-ctx.Done():
				return fmt.Errorf("lost wake-up: reader at %v, waiting for offset %d: %w",
					f.c.Position(), last, ctx.Err())
			}
		}
	}
	return nil
}

// armAndClose opens cursors that arm and are closed, possibly while a wake
// round holds their Waker, until done; a Waker called after its cursor's
// Close returned is an error.
func armAndClose(ctx context.Context, s *Store, name string, done <-chan struct{}) error {
	var late atomic.Bool
	for {
		select {
		case <-done:
			if late.Load() {
				return errors.New("Waker called after Cursor.Close returned")
			}
			return nil
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, err := s.Subscribe(name, Start{})
		if err != nil {
			return fmt.Errorf("subscribe %q: %w", name, err)
		}
		var closed atomic.Bool
		c.Wait(funcWaker(func() {
			if closed.Load() {
				late.Store(true)
			}
		}))
		runtime.Gosched() // let an append or a round land between arming and closing
		c.Close()
		closed.Store(true)
	}
}

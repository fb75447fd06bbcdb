package store

import (
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/store/storetest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeClock is a store clock the tests move by hand.
type fakeClock = storetest.Clock

func newFakeClock() *fakeClock { return storetest.NewClock(time.Unix(1_700_000_000, 0)) }

// chanWaker wakes by a non-blocking send on a channel of capacity 1.
type chanWaker chan struct{}

func newWaker() chanWaker { return make(chanWaker, 1) }

func (w chanWaker) Wake() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// woken reports whether a wake is pending, consuming it.
func (w chanWaker) woken() bool {
	select {
	case <-w:
		return true
	default:
		return false
	}
}

// settle waits until the notifier has run every wake round queued so far
// for channel name, so that a test can count wake-ups. It polls the
// channel's wake-pending flag (cleared inside the round), then waits for
// the round holding the waking lock.
func settle(t *testing.T, s *Store, name string) {
	t.Helper()
	ch := s.lookup(name)
	if ch == nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for ch.wakePending.Load() {
		if time.Now().After(deadline) {
			t.Fatalf("channel %q: wake round still pending", name)
		}
		runtime.Gosched()
	}
	ch.waits.waking.Lock()
	//lint:ignore SA2001 an empty critical section: we only wait for the round
	ch.waits.waking.Unlock()
}

// awaitWake waits for a wake on w, failing when timeout fires first; a
// timer made once lets allocation tests wait without allocating.
func awaitWake(t *testing.T, w chanWaker, timeout *time.Timer) {
	t.Helper()
	select {
	case <-w:
	case <-timeout.C:
		t.Fatal("no wake for a committed frame")
	}
}

// sweepUntil runs Sweep in a loop on a goroutine of wg until done is
// closed. With clk, each sweep first moves the clock a second, so that an
// empty channel is forgotten again and again.
func sweepUntil(wg *sync.WaitGroup, s *Store, clk *fakeClock, done <-chan struct{}) {
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				if clk != nil {
					clk.Advance(time.Second)
				}
				s.Sweep()
			}
		}
	})
}

// checkErrs closes errc, once every goroutine sending on it is done, and
// fails the test with each error it holds.
func checkErrs(t *testing.T, errc chan error) {
	t.Helper()
	close(errc)
	failed := false
	for err := range errc {
		if err != nil {
			t.Error(err)
			failed = true
		}
	}
	if failed {
		t.FailNow()
	}
}

// newTestStore returns a store on a fake clock without the sweeper
// goroutine (the notifier runs); opts may be nil.
func newTestStore(t *testing.T, opts *Options) (*Store, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Clock = clk
	o.SweepInterval = -1
	s := New(&o)
	t.Cleanup(func() { _ = s.Close() })
	return s, clk
}

// frameOf returns the block size that holds exactly n frames of size
// bytes of data.
func frameOf(size, n int) int { return n * (size + frameOverhead) }

// payload returns size bytes that name the message i.
func payload(i, size int) []byte {
	p := make([]byte, size)
	for j := range p {
		p[j] = byte(i + j)
	}
	return p
}

// mustAppend appends and fails the test on error.
func mustAppend(t *testing.T, s *Store, ch string, data []byte) rtm.Position {
	t.Helper()
	p, err := s.Append(ch, data)
	if err != nil {
		t.Fatalf("Append(%q): %v", ch, err)
	}
	return p
}

// mustSubscribe subscribes and fails the test on error.
func mustSubscribe(t *testing.T, s *Store, ch string, st Start) *Cursor {
	t.Helper()
	c, err := s.Subscribe(ch, st)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", ch, err)
	}
	t.Cleanup(c.Close)
	return c
}

// offsets reads everything ready on c and returns the offsets.
func offsets(t *testing.T, c *Cursor) []uint64 {
	t.Helper()
	fs, err := c.Read(nil, 0)
	if err != nil {
		t.Fatalf("Cursor.Read: %v", err)
	}
	var out []uint64
	for _, f := range fs {
		out = append(out, f.Offset)
	}
	return out
}

// seq returns the offsets from..to inclusive.
func seq(from, to uint64) []uint64 {
	var out []uint64
	for o := from; o <= to; o++ {
		out = append(out, o)
	}
	return out
}

func equalOffsets(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// oosError unwraps an *OutOfSyncError or fails.
func oosError(t *testing.T, err error) *OutOfSyncError {
	t.Helper()
	var e *OutOfSyncError
	if !errors.As(err, &e) || !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("error = %v, want *OutOfSyncError", err)
	}
	return e
}

func pos(epoch, offset uint64) *rtm.Position {
	return &rtm.Position{Epoch: epoch, Offset: offset}
}

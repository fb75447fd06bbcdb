package poll

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a testing.TB whose Fatalf records the message and ends the
// calling goroutine, as testing's does, so a failing wait can be observed.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on its own goroutine (Fatalf ends it) and
// returns what Fatalf said, or "" if f returned.
func run(t *testing.T, f func(tb testing.TB)) string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.msg
}

// TestUntilReturnsOnceTrue: Until returns as soon as another goroutine
// makes the condition true, having checked it more than once.
func TestUntilReturnsOnceTrue(t *testing.T) {
	var flag atomic.Bool
	var checks atomic.Int32
	release := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-release
		flag.Store(true)
	}()
	msg := run(t, func(tb testing.TB) {
		Until(tb, "the flag", func() bool {
			if checks.Add(1) == 3 {
				close(release) // the condition comes true while Until polls
				return false
			}
			return flag.Load()
		})
	})
	<-stopped
	if msg != "" {
		t.Fatalf("Until failed: %s", msg)
	}
	if n := checks.Load(); n < 4 {
		t.Fatalf("%d checks, want the condition polled until it held (at least 4)", n)
	}
}

// TestWithinTimesOut: a condition that never holds fails the test after
// the deadline, naming what was waited for.
func TestWithinTimesOut(t *testing.T) {
	msg := run(t, func(tb testing.TB) {
		Within(tb, 5*time.Millisecond, "the impossible", func() bool { return false })
	})
	if !strings.Contains(msg, "timed out after 5ms waiting for the impossible") {
		t.Fatalf("Fatalf said %q", msg)
	}
}

// TestUntilNil: UntilNil returns once check returns nil, and on failure
// reports the last error check returned.
func TestUntilNil(t *testing.T) {
	n := 0
	msg := run(t, func(tb testing.TB) {
		UntilNil(tb, "three calls", func() error {
			if n++; n < 3 {
				return fmt.Errorf("call %d", n)
			}
			return nil
		})
	})
	if msg != "" || n != 3 {
		t.Fatalf("UntilNil: %q after %d calls, want success at the third", msg, n)
	}
}

// TestUntilNilReportsLastError: the failure names the state reached.
func TestUntilNilReportsLastError(t *testing.T) {
	n := 0
	msg := run(t, func(tb testing.TB) {
		WithinNil(tb, 5*time.Millisecond, "all three", func() error {
			n++
			return errors.New("still 2 of 3")
		})
	})
	if !strings.Contains(msg, "timed out after 5ms waiting for all three: still 2 of 3") || n < 2 {
		t.Fatalf("Fatalf said %q", msg)
	}
}

// TestRecv: Recv returns the value sent on the channel.
func TestRecv(t *testing.T) {
	ch := make(chan int, 1)
	ch <- 7
	var got int
	msg := run(t, func(tb testing.TB) { got = Recv(tb, "a value", ch) })
	if msg != "" || got != 7 {
		t.Fatalf("Recv: %d, %q; want 7", got, msg)
	}
}

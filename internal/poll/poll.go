// Package poll waits, in tests, for a condition that another goroutine
// or process makes true and that no channel announces: a counter the edge
// exports, a line a subprocess prints, a state a client reaches (and,
// with Recv, for a value a channel does announce). It is the one
// wait-with-a-deadline of the module's tests (STYLE.md: no sleeps to wait
// for events), so that every test waits the same way and fails with the
// same kind of message.
//
// It lives in internal/ so that edge, cmd, wasm and e2e tests can all
// import it without one of them importing another; shared/ does not use
// it (shared imports nothing of ours).
package poll

import (
	"testing"
	"time"
)

// Timeout is how long Until waits: long enough for a loaded 2-core
// machine running -race, short enough that a test that will never pass
// says so.
const Timeout = 20 * time.Second

// interval is how often a condition is checked. A millisecond keeps the
// waits short without spinning a core.
const interval = time.Millisecond

// Until calls cond until it returns true, and fails t (Fatalf, naming
// what it waited for) if Timeout passes first.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	Within(t, Timeout, what, cond)
}

// Within is Until with a deadline of d.
func Within(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !wait(d, cond) {
		t.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// UntilNil calls check until it returns nil, and fails t if Timeout passes
// first, with the last error check returned: for conditions whose failure
// is worth describing (the last sample seen, the state reached instead).
func UntilNil(t testing.TB, what string, check func() error) {
	t.Helper()
	WithinNil(t, Timeout, what, check)
}

// WithinNil is UntilNil with a deadline of d.
func WithinNil(t testing.TB, d time.Duration, what string, check func() error) {
	t.Helper()
	var last error
	if !wait(d, func() bool { last = check(); return last == nil }) {
		t.Fatalf("timed out after %s waiting for %s: %v", d, what, last)
	}
}

// Recv returns the next value on ch, and fails t if Timeout passes first:
// for events that a channel does announce.
func Recv[T any](t testing.TB, what string, ch <-chan T) T {
	t.Helper()
	deadline := time.NewTimer(Timeout)
	defer deadline.Stop()
	select {
	case v := <-ch:
		return v
	case <-deadline.C:
		t.Fatalf("timed out after %s waiting for %s", Timeout, what)
		var zero T
		return zero
	}
}

// Wait calls cond until it returns true or d passes, and reports
// whether it held: for a test that goes on either way (a checker that
// reports what did not arrive rather than stopping at the first).
func Wait(d time.Duration, cond func() bool) bool { return wait(d, cond) }

// wait checks done at once, then every interval until it holds (true) or
// d has passed (false).
func wait(d time.Duration, done func() bool) bool {
	if done() {
		return true
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			if done() {
				return true
			}
		case <-deadline.C:
			return done() // one last look: the deadline may have raced it
		}
	}
}

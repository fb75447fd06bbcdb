package store

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
)

// The coarse clock's refreshes pause when nothing reads it, and the
// first stamp after that is exact: never the stale reading of the pause.
func TestCoarseClockPausesAndWakes(t *testing.T) {
	s := New(&Options{TimeResolution: time.Millisecond})
	defer s.Close()
	for round := range 3 {
		poll.Within(t, 10*time.Second, "the coarse clock to pause", s.coarseIdle.Load)
		before := time.Now().UnixNano()
		if got := s.Stamp(); got < before {
			t.Fatalf("round %d: a stamp after the pause is %v before the call", round, time.Duration(before-got))
		}
		poll.Within(t, 10*time.Second, "the coarse clock to run again", func() bool { return !s.coarseIdle.Load() })
		// Running, it follows the clock again.
		mark := time.Now().UnixNano()
		poll.Within(t, 10*time.Second, "a refresh past the mark", func() bool { return s.Stamp() >= mark })
	}
	// Stamps never go back across pauses.
	last := s.Stamp()
	for range 1000 {
		if got := s.Stamp(); got < last {
			t.Fatalf("a stamp went back by %v", time.Duration(last-got))
		} else {
			last = got
		}
	}
}

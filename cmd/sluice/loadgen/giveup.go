package loadgen

import (
	"sync"
	"time"
)

// giveUpTimer times a wait for something that may never come: deliveries
// a publisher is owed (Config.Stall), the last messages after the
// publishers stopped and the acknowledgments still outstanding
// (Config.Drain). Like a *time.Timer, Reset and Stop leave no stale value
// in C.
type giveUpTimer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

// giveUpClock makes a run's give-up timers.
type giveUpClock interface {
	newTimer(d time.Duration) giveUpTimer
}

// quiescentDriver is a Driver that knows when nothing it was given is
// still on its way (the tests' in-process broker). A run then gives up
// waiting only once the driver says so, rather than after a stretch of
// wall-clock time: on a loaded machine the goroutines that deliver may not
// run for longer than a short timeout, and a wall clock would write their
// messages off as lost.
type quiescentDriver interface {
	giveUpClock() giveUpClock
}

// clockOf returns the give-up clock of a run against d.
func clockOf(d Driver) giveUpClock {
	if q, ok := d.(quiescentDriver); ok {
		return q.giveUpClock()
	}
	return wallClock{}
}

// afterGiveUp calls f on its own goroutine once a timer of c for d fires,
// unless the returned stop is called first; stop waits for that goroutine.
func afterGiveUp(c giveUpClock, d time.Duration, f func()) (stop func()) {
	t := c.newTimer(d)
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-t.C():
			f()
		case <-stopped:
		}
	})
	return func() {
		close(stopped)
		wg.Wait()
		t.Stop()
	}
}

// wallClock gives up after wall-clock time, as a real run does.
type wallClock struct{}

func (wallClock) newTimer(d time.Duration) giveUpTimer { return wallTimer{time.NewTimer(d)} }

// wallTimer is a *time.Timer (Go 1.23 timers: no stale tick after Reset
// or Stop).
type wallTimer struct{ t *time.Timer }

func (w wallTimer) C() <-chan time.Time   { return w.t.C }
func (w wallTimer) Reset(d time.Duration) { w.t.Reset(d) }
func (w wallTimer) Stop()                 { w.t.Stop() }

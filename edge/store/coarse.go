package store

import "time"

// The coarse clock: appends stamp messages with a reading the sweeper
// refreshes every TimeResolution, because reading the clock costs more
// than an append; the refreshes pause while nothing reads it.

// coarseIdleTicks is how many refreshes of the coarse clock nobody reads
// before they pause: an edge without traffic then wakes a thousand times
// less a second (its CPU counts against what a cluster's idle edges
// cost).
const coarseIdleTicks = 64

// coarseClock is the sweeper's ticker of the coarse clock.
type coarseClock struct {
	t      *time.Ticker
	tick   <-chan time.Time
	unread int
}

func (c *coarseClock) start(d time.Duration) {
	if c.t == nil {
		c.t = time.NewTicker(d)
		c.tick, c.unread = c.t.C, 0
	}
}

func (c *coarseClock) stop() {
	if c.t != nil {
		c.t.Stop()
		c.t, c.tick = nil, nil
	}
}

// refreshed counts a refresh nobody read since the last, and pauses the
// ticker after coarseIdleTicks of them: stampNow then reads the clock
// and wakes it.
func (c *coarseClock) refreshed(s *Store) {
	if s.coarseUsed.Swap(false) {
		c.unread = 0
		return
	}
	if c.unread++; c.unread >= coarseIdleTicks {
		s.coarseIdle.Store(true)
		c.stop()
		if s.coarseUsed.Load() {
			// Read while pausing: that reader may have seen coarseIdle
			// false and taken a stale coarse; go on refreshing.
			s.coarseIdle.Store(false)
			c.start(s.opts.TimeResolution)
		}
	}
}

// stampNow is the time Append gives a message: the coarse clock when it
// runs, else an exact reading.
func (s *Store) stampNow() int64 {
	if !s.coarseOn {
		return s.clockNow()
	}
	if !s.coarseUsed.Load() {
		s.coarseUsed.Store(true) // a store only once a refresh, not per append
	}
	if s.coarseIdle.Load() {
		return s.wakeCoarse()
	}
	return s.coarse.Load()
}

// raiseCoarse sets the coarse clock to now unless it is past it (two
// goroutines write it: stamps never go back), and returns its value.
func (s *Store) raiseCoarse(now int64) int64 {
	for {
		old := s.coarse.Load()
		if now <= old {
			return old
		}
		if s.coarse.CompareAndSwap(old, now) {
			return now
		}
	}
}

// wakeCoarse reads the clock for a stamp while the coarse clock's
// refreshes are paused, and restarts them.
func (s *Store) wakeCoarse() int64 {
	now := s.raiseCoarse(time.Now().UnixNano())
	if s.coarseIdle.CompareAndSwap(true, false) {
		select {
		case s.coarseWake <- struct{}{}:
		default:
		}
	}
	return now
}

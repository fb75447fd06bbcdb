package store

import (
	"sync"
	"sync/atomic"
)

// Waker is told that a Cursor has something to read. Wake must not block,
// nor call back into the store; typically it is a non-blocking send on a
// channel of capacity 1. The store's notifier goroutine calls it, not the
// appender.
type Waker interface{ Wake() }

// waitList holds a channel's armed cursors. The notifier wakes them all
// after the next commit, at most once per cursor per Wait: with many
// appends and slow readers that is one goroutine switch per batch, not per
// message.
type waitList struct {
	// n is len(armed). Written under mu; loaded without a lock by the
	// writer after it publishes a frame, so an append with nobody waiting
	// takes no second lock.
	n atomic.Int32
	// mu guards armed and the armed flag of cursors. A leaf lock.
	mu    sync.Mutex
	armed []waiter // mu: cursors to wake after the next commit
	// waking is held by the notifier from before it takes the armed
	// cursors until it has called their Wakers, which it does outside mu
	// so that arming never waits for a round. Cursor.Close takes it
	// (briefly, after disarming) so that once Close returns no round still
	// holds its Waker. Taken before mu, never inside it.
	waking sync.Mutex
}

// waiter is an armed cursor and what wakes it.
type waiter struct {
	c *Cursor
	w Waker
}

// arm adds c unless ready (checked after publishing n) says it has
// something to read; it reports whether c is armed.
func (l *waitList) arm(c *Cursor, w Waker, ready func() bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.armed {
		return true
	}
	l.armed = append(l.armed, waiter{c: c, w: w})
	c.armed = true
	// Store n, then look; the writer publishes, then loads n. With
	// sequentially consistent atomics one of the two sees the other.
	l.n.Store(int32(len(l.armed)))
	if ready() {
		l.drop(len(l.armed) - 1)
		return false
	}
	return true
}

// disarm removes c if it is armed, then waits for a wake round in
// progress on the channel: it may have taken c before the disarm, and
// must be done calling c's Waker before c's Close returns.
func (l *waitList) disarm(c *Cursor) {
	l.mu.Lock()
	if c.armed {
		for i := range l.armed {
			if l.armed[i].c == c {
				l.drop(i)
				break
			}
		}
	}
	l.mu.Unlock()
	l.waking.Lock()
	//lint:ignore SA2001 an empty critical section: we only wait for the round
	l.waking.Unlock()
}

// drop removes entry i. mu.
func (l *waitList) drop(i int) {
	last := len(l.armed) - 1
	l.armed[i].c.armed = false
	l.armed[i] = l.armed[last]
	l.armed[last] = waiter{}
	l.armed = l.armed[:last]
	l.n.Store(int32(len(l.armed)))
}

// wakeArmed is a wake round: it clears the channel's wake-pending flag,
// takes and disarms every armed cursor and calls their Wakers, holding
// them in scratch, which it returns for reuse (nil allocates). The
// notifier calls it; so does an appender after the store closed.
func (ch *channel) wakeArmed(scratch []waiter) []waiter {
	l := &ch.waits
	l.waking.Lock()
	defer l.waking.Unlock()
	// Cleared before the take: an append from here on queues the channel
	// again, so a cursor that arms after the take is not forgotten. (One
	// that armed before it is in the list.)
	ch.wakePending.Store(false)
	l.mu.Lock()
	// Copied rather than swapped with a second list: a round's cost is in
	// the Wake calls, and the channel keeps one list, not two.
	list := append(scratch[:0], l.armed...)
	for i := range l.armed {
		l.armed[i].c.armed = false
	}
	clear(l.armed) // drop the references until the list is reused
	l.armed = l.armed[:0]
	l.n.Store(0)
	l.mu.Unlock()
	for i := range list {
		list[i].w.Wake()
	}
	clear(list)
	return list[:0]
}

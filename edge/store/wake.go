package store

import (
	"sync"
	"sync/atomic"
)

// Waker is told that a Cursor has something to read. Wake must not block;
// typically it is a non-blocking send on a channel of capacity 1.
type Waker interface{ Wake() }

// waitList holds a channel's armed cursors. The writer wakes them all at
// its next commit, at most once per cursor per Wait: with many appends and
// slow readers that is one goroutine switch per batch, not per message.
type waitList struct {
	// n is len(armed). Written under mu; loaded without a lock by the
	// writer after it publishes a frame, so an append with nobody waiting
	// takes no second lock.
	n atomic.Int32
	// mu guards armed and the armed flag of cursors. A leaf lock.
	mu    sync.Mutex
	armed []waiter // mu: cursors to wake at the next commit
	// spare is the writer's second list, swapped with armed so waking
	// allocates nothing. Guarded by channel.mu (only the writer wakes).
	spare []waiter
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

// disarm removes c if it is armed.
func (l *waitList) disarm(c *Cursor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.armed {
		return
	}
	for i := range l.armed {
		if l.armed[i].c == c {
			l.drop(i)
			return
		}
	}
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

// wake wakes every armed cursor once and disarms them. Called by the
// writer under channel.mu, so a cursor closed under channel.mu is never
// woken after Close returns.
func (l *waitList) wake() {
	l.mu.Lock()
	list := l.armed
	l.armed = l.spare[:0]
	for i := range list {
		list[i].c.armed = false
	}
	l.n.Store(0)
	l.mu.Unlock()
	for i := range list {
		list[i].w.Wake()
	}
	clear(list) // drop the references until the list is reused
	l.spare = list[:0]
}

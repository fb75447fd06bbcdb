package store

import "sync"

// notifier is the store's one goroutine that wakes armed cursors, so that
// an appender never pays for them: with a thousand subscribers on a
// channel, the publisher's append would otherwise call a thousand Wakers,
// and on few cores the goroutines it wakes would compete with it.
//
// An append that finds cursors armed sets its channel's wakePending flag
// and, if the flag was clear, queues the channel here and rings. The
// goroutine takes the queue and runs a wake round per channel
// (channel.wakeArmed), which clears the flag before it takes the armed
// cursors: an append after that queues the channel again, so no wake-up
// is lost. From the queueing to the start of the round, appends to the
// channel find the flag set and do nothing more: while the goroutine is
// busy (waking a long list, or other channels), wake-ups coalesce and
// readers get bigger batches.
type notifier struct {
	mu      sync.Mutex    // guards queued and stopped; a leaf lock
	queued  []*channel    // mu: channels whose wakePending an appender set
	stopped bool          // mu: the goroutine is gone; appenders wake inline
	ring    chan struct{} // capacity 1: rung after queueing a channel

	// Owned by the goroutine: taken is the queue being served (swapped
	// with queued, so queueing allocates nothing in steady state) and
	// scratch holds the Wakers of the round being run.
	taken   []*channel
	scratch []waiter
}

// queue has the armed cursors of ch woken; the caller just set
// ch.wakePending. Once the store is closed nobody serves the queue, so
// the caller (an append that raced Close) wakes them itself.
func (nt *notifier) queue(ch *channel) {
	nt.mu.Lock()
	if nt.stopped {
		nt.mu.Unlock()
		ch.wakeArmed(nil)
		return
	}
	nt.queued = append(nt.queued, ch)
	nt.mu.Unlock()
	select {
	case nt.ring <- struct{}{}:
	default: // already rung: the goroutine takes the queue after this push
	}
}

// notify is the notifier goroutine. On stop it serves what is queued, so
// every append acknowledged before Close still wakes its readers.
func (s *Store) notify() {
	nt := &s.nt
	for {
		select {
		case <-s.stop:
			nt.mu.Lock()
			nt.stopped = true
			nt.mu.Unlock()
			nt.serve()
			return
		case <-nt.ring:
			nt.serve()
		}
	}
}

// serve runs a wake round for every channel queued so far.
func (nt *notifier) serve() {
	nt.mu.Lock()
	list := nt.queued
	nt.queued = nt.taken[:0]
	nt.mu.Unlock()
	for _, ch := range list {
		nt.scratch = ch.wakeArmed(nt.scratch)
	}
	clear(list) // a forgotten channel is not kept alive by the list
	nt.taken = list[:0]
}

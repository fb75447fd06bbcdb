package server

import (
	"sync/atomic"

	"github.com/sluicehq/sluice/shared/websocket"
)

// outbox is what a connection has to send and who sends it: the queue of
// replies and control items (the end of a subscription, a close), in the
// order the writer sends them, and the writer's state. It alone writes
// the queue, and keeps the count of its bytes that bounds what a client
// that does not read can pile up (Limits.QueueBytes).
//
// The queue has no lock of its own: conn.mu guards it, with conn.live,
// because a subscription's hand-over changes both in one step (its ok
// reply is queued as it becomes live) and the writer takes both in one
// step (takeWork), so that a subscription's reply always leaves before
// its data and its end after. The methods ending in Locked are called
// with conn.mu held.
//
// Who may write to the socket, and when, is the writer's state
// (writerState, writerstate.go).
type outbox struct {
	items []outItem // conn.mu
	bytes int       // conn.mu: of the encoded frames in items
	limit int       // the bound on bytes, Limits.QueueBytes; set at construction

	// writer says who holds the writer (writerstate.go).
	writer writerState
	// closed is set, once, just before the connection's ctx is cancelled
	// (closeWith, abort). Writer passes check it rather than ctx: it sits
	// beside state, on the cache line a pass loads anyway, where ctx's
	// state is an allocation of its own, one more cache miss per delivery.
	closed atomic.Bool
	// fan is the fan-out worker that makes the writer's passes when Wake
	// finds it idle (fanout.go); nil when the connection cannot write
	// without blocking (TLS): then a writer goroutine does. Set at
	// construction.
	fan *fanWorker
	// wakeDue is the reader's alone: it queued work while handling a
	// frame and has not woken the writer for it yet (markWakeDue).
	wakeDue bool
}

// pushLocked queues it unless its frame would take the queue past its
// bound, and reports whether it did.
func (o *outbox) pushLocked(it outItem) bool {
	if o.bytes+len(it.frame) > o.limit {
		return false
	}
	o.items = append(o.items, it)
	o.bytes += len(it.frame)
	return true
}

// pushUncheckedLocked queues it whatever the queue holds, possibly past
// its bound. It is for the items that must not be refused, all bounded by
// other means:
//
//   - the end of a subscription (unsubscribe, a forced subscribe, a grant
//     that ended) and the close item: they carry no frame, so they add no
//     bytes, but once the queue is over its bound a checked push would
//     refuse even them, and nothing else closes an ended subscription's
//     cursor or closes the connection after its last reply;
//   - a subscribe's ok reply and fast_forward notice (handOver): queued in
//     the step that makes the subscription live, so that the writer never
//     sees the one without the other; checking the bound there would mean
//     undoing the hand-over under the lock. They are one per subscribe,
//     and the next checked push finds the queue over and closes;
//   - the replies of journal publishes (completeAck), whose messages are
//     stored already: the reader takes no new publish while the queue is
//     full (pushAck), so they pass the bound by the replies of at most
//     maxInFlight publishes.
func (o *outbox) pushUncheckedLocked(it outItem) {
	o.items = append(o.items, it)
	o.bytes += len(it.frame)
}

// fullLocked reports whether the queue is at its bound: a checked push
// of any frame would be refused.
func (o *outbox) fullLocked() bool { return o.bytes >= o.limit }

// takeLocked empties the queue into the writer's: it returns the queued
// items and keeps spare, emptied, as the next queue, so that the two
// slices swap and a pass does not allocate.
func (o *outbox) takeLocked(spare []outItem) []outItem {
	items := o.items
	o.items, o.bytes = spare[:0], 0
	return items
}

// pendingLocked reports whether items are queued.
func (o *outbox) pendingLocked() bool { return len(o.items) > 0 }

// discardLocked drops the queue of a connection that has ended, closing
// the subscriptions whose end the writer did not get to: their cursors
// would keep their channels.
func (o *outbox) discardLocked() {
	for _, it := range o.items {
		if it.end != nil {
			it.end.close()
		}
	}
	o.items = nil
}

// enqueue hands an item to the writer, which the reader wakes once the
// frame at hand is handled (markWakeDue). A client that lets its queue
// overflow (it sends requests but does not read) is closed with 1013.
// For the reader goroutine.
func (c *conn) enqueue(it outItem) {
	c.mu.Lock()
	ok := c.out.pushLocked(it)
	c.mu.Unlock()
	if !ok {
		c.srv.counters.SlowCloses.Add(1)
		c.closeWith(websocket.StatusTryAgainLater, "outgoing queue full: client is not reading its replies")
		return
	}
	c.markWakeDue()
}

// Wake implements store.Waker: it has the connection's fan-out worker
// make a writer pass, or starts a writer goroutine, if no writer is
// running, else makes the running one look for work again before it
// stops. It never blocks.
func (c *conn) Wake() {
	if !c.out.writer.wake() {
		return
	}
	if c.out.fan != nil {
		c.out.fan.push(c)
	} else {
		go c.writeLoop()
	}
}

// markWakeDue notes work the reader queued while handling a frame: run
// wakes the writer once the frame is handled, unless the reader holds
// more requests already read; then it waits until they are handled too,
// so that a pipelining client's replies share one write. For the reader
// goroutine only, inside handleFrame.
func (c *conn) markWakeDue() { c.out.wakeDue = true }

// wakeIfDue wakes the writer for the work markWakeDue noted. For the
// reader goroutine only.
//
// When no writer runs, the reader makes the writer's pass itself: the
// replies of the requests it just handled leave without a goroutine
// started for them and a scheduler hop to it, which were most of what an
// edge added between a request and its reply for a client with one
// request in flight. A writer goroutine takes over only when one pass
// does not finish the work (more data ready, or a Wake meanwhile), so
// the reader goes back to reading after one pass.
func (c *conn) wakeIfDue() {
	if !c.out.wakeDue {
		return
	}
	c.out.wakeDue = false
	if !c.out.writer.take() {
		c.Wake()
		return
	}
	w := writers.Get().(*writer)
	done := c.writePass(w)
	w.release()
	if !done {
		go c.writeLoop() // the state stays writerRunning: the goroutine holds the writer now
	}
}

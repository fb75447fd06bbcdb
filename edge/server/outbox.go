package server

import "github.com/sluicehq/sluice/shared/websocket"

// outbox is a connection's queue for its writer: replies and control
// items (the end of a subscription, a close), in the order the writer
// sends them. It alone writes the queue, and keeps the count of its bytes
// that bounds what a client that does not read can pile up
// (Limits.QueueBytes).
//
// It has no lock of its own: conn.mu guards it, with conn.live, because a
// subscription's hand-over changes both in one step (its ok reply is
// queued as it becomes live) and the writer takes both in one step
// (takeWork), so that a subscription's reply always leaves before its
// data and its end after. Its methods ending in Locked are called with
// conn.mu held.
type outbox struct {
	items []outItem // conn.mu
	bytes int       // conn.mu: of the encoded frames in items
	limit int       // the bound on bytes, Limits.QueueBytes; set at construction
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
//     stored already: maxInFlight bounds those waiting, and the write
//     timeout a client that stops reading.
func (o *outbox) pushUncheckedLocked(it outItem) {
	o.items = append(o.items, it)
	o.bytes += len(it.frame)
}

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
		c.srv.counters.slowCloses.Add(1)
		c.closeWith(websocket.StatusTryAgainLater, "outgoing queue full: client is not reading its replies")
		return
	}
	c.markWakeDue()
}

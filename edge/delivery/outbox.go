package delivery

import (
	"sync/atomic"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// outbox is what a connection has to send and who sends it: the queue of
// replies and control items (the end of a subscription, a close), in the
// order the writer sends them, and the writer's state. It alone writes
// the queue, and keeps the count of its bytes that bounds what a client
// that does not read can pile up (Limits.QueueBytes).
//
// The queue has no lock of its own: Conn.mu guards it, with Conn.live,
// because a subscription's hand-over changes both in one step (its ok
// reply is queued as it becomes live) and the writer takes both in one
// step (takeWork), so that a subscription's reply always leaves before
// its data and its end after. The methods ending in Locked are called
// with Conn.mu held.
//
// Who may write to the socket, and when, is the writer's state
// (writerState, writerstate.go).
type outbox struct {
	items []item // Conn.mu
	bytes int    // Conn.mu: of the encoded frames in items
	limit int    // the bound on bytes, Limits.QueueBytes; set at construction

	// writer says who holds the writer (writerstate.go).
	writer writerState
	// closed is set, once, just before the connection's ctx is cancelled
	// (CloseWith, Abort). Writer passes check it rather than ctx: it sits
	// beside state, on the cache line a pass loads anyway, where ctx's
	// state is an allocation of its own, one more cache miss per delivery.
	closed atomic.Bool
	// fan is the fan-out worker that makes the writer's passes when Wake
	// finds it idle (fanout.go); nil when the connection cannot write
	// without blocking (TLS): then a writer goroutine does. Set at
	// construction.
	fan *fanWorker
	// wakeDue is the reader's alone: it queued work while handling a
	// frame and has not woken the writer for it yet (MarkWakeDue).
	wakeDue bool
}

// item is one entry of the writer's queue: an encoded frame, or the end
// of a subscription (with an unsubscribe/ok reply when id is set).
type item struct {
	frame []byte
	end   *Subscription
	id    rtm.ID
	reply bool
	deny  string // with end: the subscription's grant ended; the reason of its rtm/subscription/error
	// closeCode, when set, closes the connection with closeReason once
	// the items before have been written.
	closeCode   websocket.StatusCode
	closeReason string
}

// pushLocked queues it unless its frame would take the queue past its
// bound, and reports whether it did.
func (o *outbox) pushLocked(it item) bool {
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
//   - a subscribe's ok reply and fast_forward notice (HandOver): queued in
//     the step that makes the subscription live, so that the writer never
//     sees the one without the other; checking the bound there would mean
//     undoing the hand-over under the lock. They are one per subscribe,
//     and the next checked push finds the queue over and closes;
//   - the replies of journal publishes (PushReply), whose messages are
//     stored already: the reader takes no new publish while the queue is
//     full (the session's pushAck), so they pass the bound by the replies
//     of at most its MaxInFlight publishes.
func (o *outbox) pushUncheckedLocked(it item) {
	o.items = append(o.items, it)
	o.bytes += len(it.frame)
}

// fullLocked reports whether the queue is at its bound: a checked push
// of any frame would be refused.
func (o *outbox) fullLocked() bool { return o.bytes >= o.limit }

// takeLocked empties the queue into the writer's: it returns the queued
// items and keeps spare, emptied, as the next queue, so that the two
// slices swap and a pass does not allocate.
func (o *outbox) takeLocked(spare []item) []item {
	items := o.items
	o.items, o.bytes = spare[:0], 0
	return items
}

// repliesOnlyLocked reports whether every queued item is a frame alone:
// no subscription's end, no close.
func (o *outbox) repliesOnlyLocked() bool {
	for i := range o.items {
		if it := &o.items[i]; it.end != nil || it.closeCode != 0 {
			return false
		}
	}
	return true
}

// discardLocked drops the queue of a connection that has ended, closing
// the subscriptions whose end the writer did not get to: their cursors
// would keep their channels.
func (o *outbox) discardLocked() {
	for _, it := range o.items {
		if it.end != nil {
			it.end.Close()
		}
	}
	o.items = nil
}

// Enqueue hands a reply's frame to the writer, which the reader wakes
// once the frame at hand is handled (MarkWakeDue). A client that lets its
// queue overflow (it sends requests but does not read) is closed with
// 1013. For the reader goroutine.
func (c *Conn) Enqueue(frame []byte) {
	c.mu.Lock()
	ok := c.out.pushLocked(item{frame: frame})
	c.mu.Unlock()
	if !ok {
		c.eng.counters.SlowCloses.Add(1)
		c.CloseWith(websocket.StatusTryAgainLater, "outgoing queue full: client is not reading its replies")
		return
	}
	c.MarkWakeDue()
}

// Wake implements store.Waker: it has the connection's fan-out worker
// make a writer pass, or starts a writer goroutine, if no writer is
// running, else makes the running one look for work again before it
// stops. It never blocks.
func (c *Conn) Wake() {
	if !c.out.writer.wake() {
		return
	}
	if c.out.fan != nil {
		c.out.fan.push(c)
	} else {
		go c.writeLoop()
	}
}

// MarkWakeDue notes work the reader queued while handling a frame: the
// reader wakes the writer once the frame is handled (WakeIfDue), unless
// it holds more requests already read; then it waits until they are
// handled too, so that a pipelining client's replies share one write.
// For the reader goroutine only, while it handles a frame.
func (c *Conn) MarkWakeDue() { c.out.wakeDue = true }

// WakeDue reports whether the reader queued work it has not woken the
// writer for yet (MarkWakeDue). For the reader goroutine only.
func (c *Conn) WakeDue() bool { return c.out.wakeDue }

// WakeIfDue wakes the writer for the work MarkWakeDue noted. For the
// reader goroutine only.
//
// When no writer runs, the reader makes the writer's pass itself: the
// replies of the requests it just handled leave without a goroutine
// started for them and a scheduler hop to it, which were most of what an
// edge added between a request and its reply for a client with one
// request in flight. A writer goroutine takes over only when one pass
// does not finish the work (more data ready, or a Wake meanwhile), so
// the reader goes back to reading after one pass.
func (c *Conn) WakeIfDue() {
	if !c.out.wakeDue {
		return
	}
	c.out.wakeDue = false
	if !c.out.writer.take() {
		c.Wake()
		return
	}
	w := writers.Get().(*writer)
	w.reader = true
	done := c.writePass(w)
	w.release()
	if !done {
		go c.writeLoop() // the state stays writerRunning: the goroutine holds the writer now
	}
}

// PushPresence queues a presence frame of sub, unless sub has ended (its
// end is queued already; nothing of it may follow), and wakes the
// writer. A connection that lets its queue fill is closed, as for
// replies. Any goroutine.
func (c *Conn) PushPresence(sub *Subscription, frame []byte) {
	c.mu.Lock()
	if c.subLocked(sub.ID) != sub {
		c.mu.Unlock()
		return
	}
	if !c.out.pushLocked(item{frame: frame}) {
		c.mu.Unlock()
		c.eng.counters.SlowCloses.Add(1)
		c.CloseWith(websocket.StatusTryAgainLater, "outgoing queue full: client is not reading its presence events")
		return
	}
	c.mu.Unlock()
	c.Wake()
}

// PushReply queues the reply of a request answered after the reader
// moved on (a publish the channel log acknowledged), past the queue's
// bound (outbox.pushUncheckedLocked says why); the caller wakes the
// writer. Any goroutine.
func (c *Conn) PushReply(frame []byte) {
	c.mu.Lock()
	c.out.pushUncheckedLocked(item{frame: frame})
	c.mu.Unlock()
}

// QueueClose queues the close of the connection with code and reason
// after the replies queued so far, past the queue's bound, as it is no
// reply. For the reader goroutine.
func (c *Conn) QueueClose(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	c.out.pushUncheckedLocked(item{closeCode: code, closeReason: reason})
	c.mu.Unlock()
	c.MarkWakeDue()
}

// Full reports whether the outbox's queue is at its bound.
func (c *Conn) Full() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.fullLocked()
}

// QueuedBytes returns the bytes of the frames the outbox's queue holds,
// for tests.
func (c *Conn) QueuedBytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.bytes
}

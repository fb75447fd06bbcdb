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
// # The writer
//
// A connection has at most one writer at a time: whoever moves state
// from writerIdle to writerRunning holds it, and makes writer passes
// (writePass, or directPass on a fan-out worker) until one ends with the
// state moved back to writerIdle, or hands it on. Meanwhile a Wake only
// sets writerAgain: each pass begins by storing writerRunning (look),
// which takes in every Wake so far, and ends with rest, which fails if a
// Wake came since, so that the holder makes another pass instead of
// going idle with work left. Who takes the writer, and how it moves:
//
//   - Wake (the store's notifier, a presence watcher, a grant's end, a
//     journal ack, a view's ticker, a close; any goroutine) queues the
//     connection on its fan-out worker (fan), which makes a direct pass
//     with writes that never block (fanout.go); a connection that cannot
//     write so (TLS) has no worker, and Wake starts a writer goroutine
//     (writeLoop) instead;
//   - the reader, after handling what it read (wakeIfDue, for the work
//     markWakeDue noted), makes one pass itself, and starts a writer
//     goroutine if that pass does not finish the work;
//   - a fan-out worker whose pass cannot go on without blocking (a full
//     socket, replies or a close to send, a catch-up, a view, a prefix)
//     hands the writer, with its output not yet written, to a writer
//     goroutine (writeLoopFrom): the state stays writerRunning, held by
//     the goroutine now;
//   - once closed is set, the next pass sends the close frame (finish)
//     and stops the writer for good (writerStopped): no writer starts
//     again, and done is closed, which the reader waits for before it
//     drops the socket.
type outbox struct {
	items []outItem // conn.mu
	bytes int       // conn.mu: of the encoded frames in items
	limit int       // the bound on bytes, Limits.QueueBytes; set at construction

	// state is the writer's (writerIdle...); see above for who moves it.
	state atomic.Int32
	// closed is set, once, just before the connection's ctx is cancelled
	// (closeWith, abort). Writer passes check it rather than ctx: it sits
	// beside state, on the cache line a pass loads anyway, where ctx's
	// state is an allocation of its own, one more cache miss per delivery.
	closed atomic.Bool
	done   chan struct{} // closed by finish, once the writer has stopped for good
	// fan is the fan-out worker that makes the writer's passes when Wake
	// finds it idle (fanout.go); nil when the connection cannot write
	// without blocking (TLS): then a writer goroutine does. Set at
	// construction.
	fan *fanWorker
	// wakeDue is the reader's alone: it queued work while handling a
	// frame and has not woken the writer for it yet (markWakeDue).
	wakeDue bool
}

// The states of outbox.state.
const (
	writerIdle    = iota // nobody holds the writer
	writerRunning        // a writer holds it: the reader, a fan-out worker or a writer goroutine
	writerAgain          // held, and woken since its pass began: another pass follows
	writerStopped        // the connection is closed; no writer will start
)

// wake is Wake's move of the writer's state: it reports whether the
// caller took an idle writer (and must have a pass made), else makes the
// holder look for work again. It never blocks.
func (o *outbox) wake() bool {
	for {
		switch o.state.Load() {
		case writerIdle:
			if o.state.CompareAndSwap(writerIdle, writerRunning) {
				return true
			}
		case writerRunning:
			if o.state.CompareAndSwap(writerRunning, writerAgain) {
				return false
			}
		default:
			return false
		}
	}
}

// take takes the writer if it is idle, and reports whether it did.
func (o *outbox) take() bool { return o.state.CompareAndSwap(writerIdle, writerRunning) }

// look begins a pass of the writer's holder: a Wake from now on asks for
// another pass.
func (o *outbox) look() { o.state.Store(writerRunning) }

// rest ends a pass that found no more work: the writer goes idle, unless
// a Wake came since the pass began (then it reports false: the holder
// makes another pass).
func (o *outbox) rest() bool { return o.state.CompareAndSwap(writerRunning, writerIdle) }

// stop stops the writer for good, once the close frame is sent. Only the
// holder calls it and no writer starts once stopped: it runs once.
func (o *outbox) stop() {
	o.state.Store(writerStopped)
	close(o.done)
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
		c.srv.counters.slowCloses.Add(1)
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
	if !c.out.wake() {
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
	if !c.out.take() {
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

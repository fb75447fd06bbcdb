package delivery

import (
	"errors"
	"os"
	"sync"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// maxBatchBytes bounds the stored bytes one rtm/subscription/data PDU
// carries; a subscriber far behind gets several PDUs, interleaved fairly
// with the connection's other subscriptions and replies.
const maxBatchBytes = 64 << 10

// flushBytes is how much the writer gathers before it writes: the frames
// of one pass (replies, then a batch per subscription) go out in one
// system call unless they pass this.
const flushBytes = 128 << 10

// errClosing stops a writer pass at a close item: the next pass sends the
// close frame.
var errClosing = errors.New("delivery: connection closing")

// writer is the scratch state of a writer's passes (the reader's, a
// fan-out worker's or a writer goroutine's). It comes from a pool and
// goes back when the pass or the goroutine ends, so an idle connection
// holds no buffers and fan-out does not allocate.
type writer struct {
	items  []item
	frames []store.Frame
	msgs   [][]byte
	pdu    []byte // one encoded PDU
	// logFrames says the frames being sent were read from the log (a
	// catch-up), not from the subscription's cursor, whose Origins says
	// nothing of them.
	logFrames bool
	namedData        // the data PDU of a prefix subscription (appendNamedData)
	out       []byte // frames gathered for one write
	// direct is set during a fan-out worker's pass (fanout.go): flush
	// does not block. kept says the connection holds bytes a direct
	// pass's write left, which the next write sends first.
	direct bool
	kept   bool
	// share is the fan-out worker's last data frames, which the
	// connections it serves reuse when theirs would be the same bytes
	// (shared.go); nil outside a worker's pass.
	share *sharedFrames
	// dbuf holds the deltas of a run (deltasend.go), dends where each
	// ends in it.
	dbuf  []byte
	dends []int
	// reader says the pass is the reader's (WakeIfDue); logTried that a
	// subscription waiting to read the log tried it this pass. Either
	// way the other tries wait for the next pass (logretry.go).
	reader, logTried bool
}

// namedData is the scratch of the data PDU of a prefix subscription,
// which names its channel (appendNamedData): its messages as raw values,
// and the PDU that holds them.
type namedData struct {
	raws     []rtm.RawValue
	vals     []any
	named    rtm.SubscriptionData
	namedPDU rtm.PDU
}

var writers = sync.Pool{New: func() any {
	return &writer{frames: make([]store.Frame, 0, 64), msgs: make([][]byte, 0, 64), out: make([]byte, 0, 16<<10)}
}}

// writeLoop is a writer goroutine, started by Wake for a connection
// without a fan-out worker, by the reader after a pass of its own
// (WakeIfDue), or by a fan-out worker (writeLoopFrom). Each pass sends the
// queued replies in order, then one batch per subscription with data
// ready, in one write; then it arms every cursor and ends, unless one has
// data ready or it was woken meanwhile. Once the connection is closing, it sends
// the close frame and marks the writer stopped for good.
func (c *Conn) writeLoop() {
	c.writeLoopFrom(writers.Get().(*writer))
}

// release returns a writer's state to the pool.
func (w *writer) release() {
	clear(w.items)
	w.items, w.out = w.items[:0], w.out[:0]
	w.direct, w.kept, w.share, w.reader = false, false, nil, false
	writers.Put(w)
}

// writePass is one pass of the writer, run by whoever holds it
// (writerRunning; outbox.go): a writer goroutine, or the reader
// (WakeIfDue).
// It reports whether the writer is done: idle with nothing left to send,
// or stopped.
func (c *Conn) writePass(w *writer) bool {
	w.logTried = false
	c.out.writer.look()
	if c.out.closed.Load() {
		c.finish()
		return true
	}
	subs := c.takeWork(w)
	err := c.writeItems(w)
	if err != nil {
		// The ends of subscriptions this pass did not get to: they are
		// out of c.live already, and nothing else closes their cursors
		// (or stops an aggregate view's ticker). Close is idempotent.
		for i := range w.items {
			if end := w.items[i].end; end != nil {
				end.Close()
			}
		}
	}
	for _, sub := range subs {
		if err != nil {
			break
		}
		err = c.pump(w, sub)
	}
	if err == nil {
		err = c.flush(w)
	}
	if err != nil {
		return false
	}
	// Arming fails for a cursor with data ready, and the swap fails
	// when Wake came meanwhile (a reply, a new subscription): either
	// way another pass follows. So a pass that sent something needs
	// no second pass to find nothing.
	return c.arm(subs) && c.out.writer.rest()
}

// finish sends the close frame, once, and stops the writer for good.
func (c *Conn) finish() {
	c.mu.Lock()
	code, reason := c.status.code, c.status.reason
	c.mu.Unlock()
	switch code {
	case 0:
		_ = c.ws.Close(websocket.StatusInternalError, reason)
	case websocket.StatusAbnormalClosure:
		// The peer is gone without a close frame: nothing to say to it.
		c.ws.CloseNow()
	default:
		// After a failed write Close fails too and drops the connection.
		_ = c.ws.Close(code, reason)
	}
	c.out.writer.stop()
}

// takeWork swaps the queue out and returns the live subscriptions under
// one lock, so a subscription's ok reply always leaves before its data.
// c.live is copy-on-write: the slice returned is a snapshot as it is.
func (c *Conn) takeWork(w *writer) []*Subscription {
	c.mu.Lock()
	full := c.out.fullLocked()
	w.items = c.out.takeLocked(w.items)
	subs := c.live
	c.mu.Unlock()
	if full {
		c.owner.Unblock() // the reader may wait for room for journal replies (the session's pushAck)
	}
	return subs
}

// writeItems sends the queued replies and ends subscriptions.
func (c *Conn) writeItems(w *writer) error {
	for i := range w.items {
		it := &w.items[i]
		if it.closeCode != 0 {
			if err := c.flush(w); err != nil {
				return err
			}
			c.CloseWith(it.closeCode, it.closeReason)
			return errClosing
		}
		if it.end != nil {
			pos := it.end.Position()
			it.end.Close()
			pdu := &rtm.PDU{
				Action: rtm.Reply(rtm.ActionUnsubscribe, rtm.OutcomeOK), ID: it.id,
				Body: &rtm.UnsubscribeReply{Position: pos.String(), SubscriptionID: it.end.ID},
			}
			switch {
			case it.deny != "":
				pdu = deniedPDU(it.end, pos, it.deny)
			case !it.reply:
				continue
			}
			var err error
			w.pdu, err = c.codec.AppendPDU(w.pdu[:0], pdu)
			if err != nil {
				return c.Internal(err)
			}
			it.frame = w.pdu
		}
		if err := c.write(w, it.frame); err != nil {
			return err
		}
	}
	clear(w.items)
	return nil
}

// pump sends one batch of ready messages of sub.
func (c *Conn) pump(w *writer, sub *Subscription) error {
	err := c.pumpOwn(w, sub)
	if err == nil && sub.View != nil {
		err = c.flushAggregate(w, sub)
	}
	if err == nil && sub.group != nil {
		err = c.pumpGroup(w, sub)
	}
	return err
}

// pumpOwn sends one batch of sub's own channel: of its catch-up from the
// log while it has one, else of its cursor; nothing while it waits to
// read the log again (logretry.go).
func (c *Conn) pumpOwn(w *writer, sub *Subscription) error {
	if sub.retry != nil {
		if on, err := c.retryDue(w, sub); !on || err != nil {
			return err
		}
	}
	if sub.CatchUp != nil {
		return c.pumpLog(w, sub)
	}
	var err error
	if w.frames, err = sub.Cursor.Read(w.frames[:0], maxBatchBytes); err != nil {
		return c.outOfSync(w, sub, err)
	}
	return c.send(w, sub, w.frames)
}

// arm asks every cursor to ring the doorbell on new data. It returns false
// if one already has data, so the writer loops instead of sleeping.
func (c *Conn) arm(subs []*Subscription) bool {
	for _, s := range subs {
		if !c.armOwn(s) {
			return false
		}
		if s.group != nil && !c.armGroup(s) {
			return false
		}
	}
	return true
}

// armOwn arms sub's own cursor, or its group's timer while it waits to
// read the log again (logretry.go); false if it has data ready, or a
// catch-up from the log to read on.
func (c *Conn) armOwn(sub *Subscription) bool {
	if r := sub.retry; r != nil && !r.at.IsZero() {
		if !time.Now().Before(r.at) {
			return false // due, and left for the next pass
		}
		sub.prefixGroup().wakeBy(r.at)
		return true
	}
	return sub.CatchUp == nil && sub.Cursor.Wait(c)
}

// write adds one frame carrying pdu to the writer's output, and writes
// the output out once it is large.
func (c *Conn) write(w *writer, pdu []byte) error {
	w.out = c.ws.AppendFrame(w.out, c.op, pdu)
	return c.wrote(w, len(pdu))
}

// wrote counts the n bytes of a PDU whose frame was just added to w.out,
// and writes what is gathered once it is enough.
func (c *Conn) wrote(w *writer, n int) error {
	c.count(n)
	if len(w.out) < flushBytes {
		return nil
	}
	return c.flush(w)
}

// count counts the n bytes of a PDU sent.
func (c *Conn) count(n int) {
	c.eng.counters.BytesOut[c.codecIndex].Add(uint64(n))
	c.traffic.BytesOut.Add(uint64(n))
}

// flush writes the gathered frames in one write. The connection's write
// timeout bounds it: a client that stopped reading is dropped.
func (c *Conn) flush(w *writer) error {
	if len(w.out) == 0 {
		return nil
	}
	if w.direct {
		return c.tryFlush(w)
	}
	err := c.ws.Write(w.out)
	w.out = w.out[:0]
	if err != nil {
		c.writeFailed(err)
	}
	return err
}

// writeFailed closes the connection after a failed write.
func (c *Conn) writeFailed(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		c.eng.counters.SlowCloses.Add(1)
		c.CloseWith(websocket.StatusPolicyViolation, "write timeout: client is not reading")
	} else {
		c.CloseWith(websocket.StatusPolicyViolation, "write failed")
	}
	// The writer's next pass finds ctx done and finish closes: Close
	// fails on the broken connection and drops it, stopping the close
	// timer Close armed.
}

// Internal logs an internal error and closes the connection with 1011;
// the client sees no detail.
func (c *Conn) Internal(err error) error {
	c.eng.log.Error("connection internal error", "remote", c.remote, "err", err)
	c.CloseWith(websocket.StatusInternalError, "internal error")
	return err
}

package delivery

import (
	"errors"
	"os"
	"sync"

	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/payload"
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
	// The data PDU of a prefix subscription (appendNamedData).
	raws     []rtm.RawValue
	vals     []any
	named    rtm.SubscriptionData
	namedPDU rtm.PDU
	out      []byte // frames gathered for one write
	// direct is set during a fan-out worker's pass (fanout.go): flush
	// does not block. kept says the connection holds bytes a direct
	// pass's write left, which the next write sends first.
	direct bool
	kept   bool
	// share is the fan-out worker's last data frames, which the
	// connections it serves reuse when theirs would be the same bytes
	// (shared.go); nil outside a worker's pass.
	share *sharedFrames
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
	w.direct, w.kept, w.share = false, false, nil
	writers.Put(w)
}

// writePass is one pass of the writer, run by whoever holds it
// (writerRunning; outbox.go): a writer goroutine, or the reader
// (WakeIfDue).
// It reports whether the writer is done: idle with nothing left to send,
// or stopped.
func (c *Conn) writePass(w *writer) bool {
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
	var err error
	if sub.CatchUp != nil {
		err = c.pumpLog(w, sub)
	} else if w.frames, err = sub.Cursor.Read(w.frames[:0], maxBatchBytes); err != nil {
		return c.outOfSync(w, sub, err)
	} else {
		err = c.send(w, sub, w.frames)
	}
	if err == nil && sub.View != nil {
		err = c.flushAggregate(w, sub)
	}
	if err == nil && sub.group != nil {
		err = c.pumpGroup(w, sub)
	}
	return err
}

// send sends frames, if any, as rtm/subscription/data of sub: one, or
// several of at most sub.batch messages each.
func (c *Conn) send(w *writer, sub *Subscription, frames []store.Frame) error {
	for n := sub.Batch; n > 0 && len(frames) > n; frames = frames[n:] {
		if err := c.sendData(w, sub, frames[:n]); err != nil {
			return err
		}
	}
	return c.sendData(w, sub, frames)
}

// sendData sends frames, if any, as one rtm/subscription/data of sub.
func (c *Conn) sendData(w *writer, sub *Subscription, frames []store.Frame) error {
	if len(frames) == 0 || sub.View != nil && sub.View.Over() {
		return nil
	}
	w.msgs = w.msgs[:0]
	next := rtm.Position{Epoch: sub.Cursor.Position().Epoch, Offset: frames[len(frames)-1].Offset + 1}
	all := len(frames)
	sf, done, err := c.sendShared(w, sub, frames, next)
	if done {
		return err
	}
	if w.logFrames || sub.Cursor.Origins() {
		// Some message may be the connection's own (exclude_self): it is
		// dropped after next is known, so the PDU's position covers it,
		// as it does those a view or value_changes drops. (A cursor says
		// when none of its frames has an origin: nearly always, and then
		// no frame is looked at.)
		if frames = c.dropOwn(frames); len(frames) == 0 {
			return nil
		}
	}
	if sv := sub.View; sv != nil && sv.Aggregates() {
		if err := sv.Count(frames, next, c.ctx.Done()); err != nil {
			return c.endView(w, sub, err, sub.Position())
		}
		return nil // sent at the period's end (flushAggregate)
	}
	var over *filter.BudgetError
	if err := c.collect(w, sub, frames); err != nil {
		// A type assertion: errors.As would move over to the heap.
		if over, _ = err.(*filter.BudgetError); over == nil {
			return c.endView(w, sub, err, next)
		}
		// What the view made of the messages before the one it gave up
		// on goes out first, and the subscription ends at that one.
		frames, next.Offset = filter.FramesBefore(frames, over.Offset), over.Offset
	}
	if err := c.sendMsgs(w, sub, sf, frames, len(frames) == all, next); err != nil || over == nil {
		return err
	}
	return c.endView(w, sub, over, next)
}

// collect appends to w.msgs, encoded for c, the messages of frames as
// sub gets them: through its view, if it has one.
func (c *Conn) collect(w *writer, sub *Subscription, frames []store.Frame) error {
	if sub.View != nil {
		var err error
		w.msgs, err = sub.View.Messages(w.msgs, frames, c.codecIndex, c.ctx.Done())
		return err
	}
	for i := range frames {
		// By index: a copy of each Frame would cost more than its Data.
		m, err := payload.In(frames[i].Data, c.codecIndex)
		if err != nil {
			return err
		}
		w.msgs = append(w.msgs, m)
	}
	return nil
}

// sendMsgs sends w.msgs, the messages of frames as sub gets them, as one
// data PDU at next, if value_changes leaves any; whole says no frame was
// dropped. sf, if set, keeps the PDU for the next deliveries.
func (c *Conn) sendMsgs(w *writer, sub *Subscription, sf *sharedFrame, frames []store.Frame, whole bool, next rtm.Position) error {
	if sub.Changes != nil {
		w.msgs = sub.Changes.filter(w.msgs)
	}
	if len(w.msgs) == 0 {
		return nil // the view or value_changes dropped them all; the next PDU's position covers them
	}
	if sub.named {
		if err := c.appendNamedData(w, sub, next); err != nil {
			return err
		}
	} else {
		w.pdu = c.codec.AppendData(w.pdu[:0], sub.ID, next, w.msgs)
	}
	clear(w.msgs)
	c.eng.counters.MessagesOut[c.codecIndex].Add(uint64(len(w.msgs)))
	c.traffic.MessagesOut.Add(uint64(len(w.msgs)))

	var err error
	if sf != nil {
		// Framed once, for this connection and the next ones.
		sf.keep(c, sub, frames, next.Epoch, w.pdu, len(w.msgs))
		err = c.writeFrame(w, sf)
	} else {
		err = c.write(w, w.pdu)
	}
	if err != nil {
		return err
	}
	if c.eng.firstSeen != nil && whole {
		// A batch with a message dropped is left to the subscribers
		// that get it all.
		c.observeFirst(sub, frames)
	}
	return nil
}

// dropOwn removes from frames, in place (the caller does not read them
// again), the messages whose origin is this connection's id: published
// with exclude_self by the connection itself, or with exclude_connection
// through the server API. Every subscription of the connection skips
// them, live or replaying history (views never see them, aggregates do
// not count them); other connections get them as usual.
func (c *Conn) dropOwn(frames []store.Frame) []store.Frame {
	for i := range frames {
		if c.own(&frames[i]) {
			kept := frames[:i]
			for j := i + 1; j < len(frames); j++ {
				if !c.own(&frames[j]) {
					kept = append(kept, frames[j])
				}
			}
			return kept
		}
	}
	return frames
}

// own reports whether f's origin is this connection's id.
func (c *Conn) own(f *store.Frame) bool {
	return f.Origin != nil && string(f.Origin) == c.id
}

// observeFirst reports, for each message of frames that no subscriber had
// been sent before, the seconds since it was stored: the latency of live
// delivery. So it counts only batches of messages stored after sub was
// made; a batch with history in it (a replay, a resume, a catch-up from
// the log) is left out, and marks nothing, so that a live subscriber
// sending the same messages later counts them. Subscribers that come
// second pay one atomic load per batch.
func (c *Conn) observeFirst(sub *Subscription, frames []store.Frame) {
	if frames[0].Time < sub.Since {
		return
	}
	last := frames[len(frames)-1].Offset
	prev := sub.Cursor.MarkDelivered(last)
	if prev >= last {
		return
	}
	now := c.eng.store.Now()
	for i := range frames {
		if f := &frames[i]; f.Offset > prev {
			c.eng.firstSeen.Observe(float64(max(now-f.Time, 0)) / 1e9)
		}
	}
}

// outOfSync handles a cursor whose read point was deleted: with
// fast_forward it jumps to the oldest stored message and says so; without,
// the subscription ends with out_of_sync.
func (c *Conn) outOfSync(w *writer, sub *Subscription, err error) error {
	var oos *store.OutOfSyncError
	if !errors.As(err, &oos) {
		return c.Internal(err)
	}
	var pdu rtm.PDU
	if sub.FastForward {
		c.eng.counters.FastForward.Add(1)
		missed, pos := sub.Cursor.FastForward()
		pdu = rtm.PDU{Action: rtm.ActionSubscriptionInfo, Body: &rtm.SubscriptionInfo{
			Info: rtm.InfoFastForward, Reason: "subscription fell behind; skipped to the oldest stored message",
			Position: pos.String(), SubscriptionID: sub.ID, MissedMessageCount: missed,
		}}
	} else {
		c.eng.counters.OutOfSync.Add(1)
		c.endSub(sub)
		pdu = rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
			Error: string(rtm.CodeOutOfSync), Reason: "subscription fell behind and its messages expired; resubscribe",
			Position: oos.Position.String(), SubscriptionID: sub.ID, MissedMessageCount: oos.Missed,
		}}
	}
	var e error
	w.pdu, e = c.codec.AppendPDU(w.pdu[:0], &pdu)
	if e != nil {
		return c.Internal(e)
	}
	return c.write(w, w.pdu)
}

// endSub ends a subscription the writer gives up on (the whole prefix
// subscription, for one of its children).
func (c *Conn) endSub(sub *Subscription) {
	if sub.of != nil {
		sub = sub.of
	}
	c.mu.Lock()
	if c.dropSubLocked(sub) {
		c.eng.counters.Subscriptions.Add(-1)
	}
	c.mu.Unlock()
	sub.Close()
	c.owner.Ended()
}

// arm asks every cursor to ring the doorbell on new data. It returns false
// if one already has data, so the writer loops instead of sleeping.
func (c *Conn) arm(subs []*Subscription) bool {
	for _, s := range subs {
		if s.CatchUp != nil || !s.Cursor.Wait(c) {
			return false // a catch-up reads on
		}
		if s.group != nil && !c.armGroup(s) {
			return false
		}
	}
	return true
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
	c.eng.counters.BytesOut[c.codecIndex].Add(uint64(n))
	c.traffic.BytesOut.Add(uint64(n))
	if len(w.out) < flushBytes {
		return nil
	}
	return c.flush(w)
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

// deniedPDU is the rtm/subscription/error of a subscription ended by its
// session (EndWhere: its grant ended, or its app's backend ended it),
// resumable at pos once the client may subscribe again.
func deniedPDU(sub *Subscription, pos rtm.Position, reason string) *rtm.PDU {
	return &rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
		Error: string(rtm.CodeAuthorizationDenied), Reason: reason,
		Position: pos.String(), SubscriptionID: sub.ID,
	}}
}

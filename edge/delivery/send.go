package delivery

import (
	"errors"

	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// What a writer pass sends of a subscription: its messages as data PDUs
// (through its view and value_changes, without the connection's own),
// and the end of a subscription the writer gives up on.

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
	if sub.delta != nil {
		return c.sendDeltas(w, sub, sf, frames, len(frames) == all, next)
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
		sf.keep(c, sub, frames, next.Epoch, 0, w.pdu, len(w.msgs))
		err = c.writeFrame(w, sf)
	} else {
		err = c.write(w, w.pdu)
	}
	if err != nil {
		return err
	}
	if c.eng.firstSeen != nil && whole && !w.logFrames {
		// A batch with a message dropped is left to the subscribers
		// that get it all; one read from the log is not live.
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

// outOfSync handles a cursor whose read point was deleted: where the log
// keeps them, the subscription reads on from it (resume); else with
// fast_forward it jumps to the oldest stored message and says so;
// without, the subscription ends with out_of_sync.
func (c *Conn) outOfSync(w *writer, sub *Subscription, err error) error {
	var oos *store.OutOfSyncError
	if !errors.As(err, &oos) {
		return c.Internal(err)
	}
	if done, err := c.resume(w, sub, oos); done || err != nil {
		return err
	}
	var pdu rtm.PDU
	if sub.FastForward {
		c.eng.counters.FastForward.Add(1)
		missed, pos := sub.Cursor.FastForward()
		sub.delta.gap() // the client cannot apply a delta across what it missed
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

// deniedPDU is the rtm/subscription/error of a subscription ended by its
// session (EndWhere: its grant ended, or its app's backend ended it),
// resumable at pos once the client may subscribe again.
func deniedPDU(sub *Subscription, pos rtm.Position, reason string) *rtm.PDU {
	return &rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
		Error: string(rtm.CodeAuthorizationDenied), Reason: reason,
		Position: pos.String(), SubscriptionID: sub.ID,
	}}
}

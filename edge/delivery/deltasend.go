package delivery

import (
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// sendDeltas sends frames of a delta subscription (delta.go) as data
// PDUs that each carry whole messages only, or deltas only: a PDU's
// delta flag covers all its messages, so a batch whose first message
// goes whole (after a gap) and the rest as deltas is two PDUs. whole
// says no frame was dropped (observeFirst); sf, if set, keeps a batch
// sent as one PDU for the next deliveries.
func (c *Conn) sendDeltas(w *writer, sub *Subscription, sf *sharedFrame, frames []store.Frame, whole bool, next rtm.Position) error {
	all, key := frames, sub.delta.key()
	for len(frames) > 0 {
		n, err := c.deltaPDU(w, sub, frames, next)
		if err != nil {
			return err
		}
		c.eng.counters.MessagesOut[c.codecIndex].Add(uint64(n))
		c.traffic.MessagesOut.Add(uint64(n))
		if sf != nil && n == len(all) {
			sf.keep(c, sub, all, next.Epoch, key, w.pdu, n)
			err = c.writeFrame(w, sf)
		} else {
			err = c.write(w, w.pdu)
		}
		if err != nil {
			return err
		}
		frames = frames[n:]
	}
	if c.eng.firstSeen != nil && whole && !w.logFrames {
		c.observeFirst(sub, all)
	}
	return nil
}

// deltaPDU puts in w.pdu the data PDU of the first messages of frames
// that go alike, whole or as deltas, and returns how many it carries.
// The message of a batch of one, the live feed's, goes by oneDelta.
func (c *Conn) deltaPDU(w *writer, sub *Subscription, frames []store.Frame, next rtm.Position) (int, error) {
	if len(frames) == 1 {
		if ok, err := c.oneDelta(w, sub, &frames[0], next); ok || err != nil {
			return 1, err
		}
	}
	n, delta, err := c.deltaRun(w, sub, frames, next.Epoch)
	if err != nil {
		return 0, err
	}
	pos := next
	if n < len(frames) {
		pos.Offset = frames[n-1].Offset + 1
	}
	if delta {
		w.pdu = c.denc.AppendDeltaData(w.pdu[:0], sub.ID, pos, w.msgs)
	} else {
		w.pdu = c.codec.AppendData(w.pdu[:0], sub.ID, pos, w.msgs)
	}
	clear(w.msgs)
	return n, nil
}

// oneDelta puts in w.pdu the data PDU at next of f, a batch's only
// message, as a delta, if it goes as one (false: it goes whole). Only
// the PDU's head, with the subscription id, is the subscriber's own: the
// rest is the channel's (deltaLog.appendDeltaPDU).
func (c *Conn) oneDelta(w *writer, sub *Subscription, f *store.Frame, next rtm.Position) (bool, error) {
	d := sub.delta
	if d.prev == nil || d.epoch != next.Epoch || c.denc == nil {
		return false, nil
	}
	if d.head == nil {
		if d.head = pduHead(c.denc, c.codecIndex, sub.ID); d.head == nil {
			return false, nil
		}
	}
	k := deltaKey{epoch: next.Epoch, prev: d.off, off: f.Offset, codec: c.codecIndex}
	pdu, ok, err := d.log.appendDeltaPDU(append(w.pdu[:0], d.head...), k, d.prev, f.Data, c.denc, next)
	w.pdu = pdu
	if ok && err == nil {
		d.sent(f, next.Epoch)
	}
	return ok, err
}

// deltaRun puts in w.msgs the first messages of frames that go alike
// (delta says how), as many as do (n), and makes the last of them the
// subscription's previous message.
func (c *Conn) deltaRun(w *writer, sub *Subscription, frames []store.Frame, epoch uint64) (n int, delta bool, err error) {
	d := sub.delta
	w.msgs, w.dbuf, w.dends = w.msgs[:0], w.dbuf[:0], w.dends[:0]
	for i := range frames {
		f := &frames[i]
		ok := false
		if d.prev != nil && d.epoch == epoch && c.denc != nil {
			// The message's encoding is read by whoever computes its
			// delta; the others copy the delta.
			k := deltaKey{epoch: epoch, prev: d.off, off: f.Offset, codec: c.codecIndex}
			if w.dbuf, ok, err = d.log.appendDelta(w.dbuf, k, d.prev, f.Data, c.denc); err != nil {
				return 0, false, err
			}
		}
		if i == 0 {
			delta = ok
		} else if ok != delta {
			break // the next run starts here (a delta computed is kept in the log)
		}
		if delta {
			w.dends = append(w.dends, len(w.dbuf))
		} else {
			m, err := payload.In(f.Data, c.codecIndex)
			if err != nil {
				return 0, false, err
			}
			w.msgs = append(w.msgs, m)
		}
		d.sent(f, epoch)
		n++
	}
	if delta {
		// Sliced once every delta is in: appending may move dbuf.
		from := 0
		for _, end := range w.dends {
			w.msgs = append(w.msgs, w.dbuf[from:end])
			from = end
		}
	}
	return n, delta, nil
}

// sent makes f, of epoch, the last message sent on the subscription.
func (d *subDelta) sent(f *store.Frame, epoch uint64) {
	if d != nil {
		d.prev, d.off, d.epoch = f.Data, f.Offset, epoch
	}
}

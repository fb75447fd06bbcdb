package delivery

import (
	"errors"

	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/rtm"
)

// What the writer does with a subscription's view (edge/filter): it
// sends an aggregate view's results at the end of each period, and ends
// a subscription whose view gave up on a message.

// flushAggregate sends, if its period ended, the groups of sub's
// aggregate view as one data PDU.
func (c *Conn) flushAggregate(w *writer, sub *Subscription) error {
	sv := sub.View
	if sv == nil || !sv.Due() {
		return nil
	}
	var err error
	if w.msgs, err = sv.Results(w.msgs[:0], c.codecIndex); err != nil {
		clear(w.msgs)
		return c.endView(w, sub, err, sub.Position())
	}
	if sub.Changes != nil {
		w.msgs = sub.Changes.filter(w.msgs)
	}
	if len(w.msgs) == 0 {
		return nil
	}
	err = c.sendResults(w, sub, w.msgs)
	clear(w.msgs)
	return err
}

// sendResults sends a period's results as data PDUs of at most
// maxBatchBytes of messages each (at least one message), as send bounds
// the channel's own batches, all at the period's position: a period of
// 10,000 groups is many PDUs, not one of unbounded size.
func (c *Conn) sendResults(w *writer, sub *Subscription, msgs [][]byte) error {
	for len(msgs) > 0 {
		n, size := 0, 0
		for n < len(msgs) && (n == 0 || size+len(msgs[n]) <= maxBatchBytes) {
			size += len(msgs[n])
			n++
		}
		w.pdu = c.codec.AppendData(w.pdu[:0], sub.ID, sub.View.Next(), msgs[:n])
		c.eng.counters.MessagesOut[c.codecIndex].Add(uint64(n))
		c.traffic.MessagesOut.Add(uint64(n))
		if err := c.write(w, w.pdu); err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}

// endView ends sub, whose view gave up on the message at pos because
// evaluating it would cost more than view.Budget, and tells the client;
// filter.ErrGone is returned as it is, any other error is internal.
func (c *Conn) endView(w *writer, sub *Subscription, err error, pos rtm.Position) error {
	switch {
	case errors.Is(err, filter.ErrGone):
		return err
	case !errors.Is(err, view.ErrBudget):
		return c.Internal(err)
	}
	sub.View.MarkOver()
	c.eng.log.Info("a view exceeded its evaluation budget; subscription ended", "remote", c.remote,
		"subscription", sub.ID, "channel", sub.Channel, "position", pos.String())
	c.endSub(sub)
	return c.writePDU(w, &rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
		Error: string(rtm.CodeInvalidFilter), Reason: filter.BudgetReason,
		Position: pos.String(), SubscriptionID: sub.ID,
	}})
}

package server

import (
	"github.com/sluicehq/sluice/shared/rtm"
)

// pumpLog sends the next batch of a subscription's catch-up (the history
// its cursor does not hold, read from the log: chanlog.CatchUp), and
// hands the subscription over to its cursor once it reached it. A log
// that cannot be read ends the subscription with
// rtm/subscription/error "unavailable": the client resubscribes from its
// position.
func (c *conn) pumpLog(w *writer, sub *subscription) error {
	frames, done, err := sub.catchup.Read(c.ctx, maxBatchBytes)
	if err != nil {
		return c.failCatchUp(w, sub, err)
	}
	if done {
		sub.catchup = nil // the rest is in the cursor
	}
	w.logFrames = true
	err = c.send(w, sub, frames)
	w.logFrames = false
	return err
}

// failCatchUp ends a subscription whose catch-up could not be read from
// the log with rtm/subscription/error "unavailable": the client
// resubscribes from its position, and misses nothing.
func (c *conn) failCatchUp(w *writer, sub *subscription, err error) error {
	if c.ctx.Err() != nil {
		return err
	}
	c.srv.log.Warn("catch-up from the log failed", "remote", c.remote, "subscription", sub.id, "err", err)
	pos := sub.position()
	c.endSub(sub)
	w.pdu, err = c.codec.AppendPDU(w.pdu[:0], &rtm.PDU{Action: rtm.ActionSubscriptionErr,
		Body: &rtm.SubscriptionError{
			Error: string(rtm.CodeUnavailable), Reason: "the history could not be read from the cluster's log; resubscribe",
			Position: pos.String(), SubscriptionID: sub.id,
		}})
	if err != nil {
		return c.internal(err)
	}
	return c.write(w, w.pdu)
}

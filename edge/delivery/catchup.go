package delivery

import (
	"errors"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// pumpLog sends the next batch of a subscription's catch-up (the history
// its cursor does not hold, read from the log: chanlog.CatchUp), and
// hands the subscription over to its cursor once it reached it. A log
// that cannot be read ends the subscription with
// rtm/subscription/error "unavailable": the client resubscribes from its
// position (a prefix subscription's channel waits and tries again:
// failCatchUp).
func (c *Conn) pumpLog(w *writer, sub *Subscription) error {
	cu := sub.CatchUp
	frames, done, err := cu.Read(c.ctx, maxBatchBytes)
	if err != nil {
		return c.failCatchUp(w, sub, err)
	}
	if len(frames) > 0 {
		sub.retry = nil // the log reads again
	}
	w.logFrames = true
	err = c.send(w, sub, frames)
	w.logFrames = false
	if err != nil || !done {
		return err
	}
	return c.endCatchUp(w, sub, cu)
}

// endCatchUp hands a subscription whose catch-up from the log is done
// over to its cursor, or ends it out of sync if a purge overtook the
// catch-up (chanlog.CatchUp.End).
func (c *Conn) endCatchUp(w *writer, sub *Subscription, cu *chanlog.CatchUp) error {
	err := cu.End(c.ctx)
	var oos *store.OutOfSyncError
	switch {
	case errors.As(err, &oos):
		sub.CatchUp = nil
		return c.outOfSync(w, sub, err)
	case err != nil:
		return c.failCatchUp(w, sub, err)
	}
	sub.CatchUp, sub.retry = nil, nil // the rest is in the cursor
	return nil
}

// failCatchUp ends a subscription whose catch-up could not be read from
// the log with rtm/subscription/error "unavailable": the client
// resubscribes from its position, and misses nothing. A prefix
// subscription's channel tries again later instead (retryLater): its
// catch-up is where it was.
func (c *Conn) failCatchUp(w *writer, sub *Subscription, err error) error {
	switch {
	case c.ctx.Err() != nil:
		return err
	case sub.prefixed():
		return c.retryLater(w, sub, err, nil)
	}
	return c.endUnavailable(w, sub, sub.Position(), err)
}

// endUnavailable ends sub, whose history the log could not give (err),
// with rtm/subscription/error "unavailable" at pos: the client
// resubscribes from there, and misses nothing.
func (c *Conn) endUnavailable(w *writer, sub *Subscription, pos rtm.Position, err error) error {
	c.eng.log.Warn("reading a subscription's history from the log failed", "remote", c.remote, "subscription", sub.ID, "err", err)
	c.endSub(sub)
	w.pdu, err = c.codec.AppendPDU(w.pdu[:0], &rtm.PDU{Action: rtm.ActionSubscriptionErr,
		Body: &rtm.SubscriptionError{
			Error: string(rtm.CodeUnavailable), Reason: "the history could not be read from the cluster's log; resubscribe",
			Position: pos.String(), SubscriptionID: sub.ID,
		}})
	if err != nil {
		return c.Internal(err)
	}
	return c.write(w, w.pdu)
}

// resume opens sub again at oos.Position, where its cursor fell out of sync,
// through the channel log: a durable edge's store is a cache of its log
// (limits.store_bytes), and a subscriber more than the store behind
// reads on from the log, as a client resubscribing at pos would, without
// being told anything. It reports whether it did. It does not where the
// log no longer keeps pos either (the messages expired, or the memory
// log, whose store is all there is: the caller says so, or skips ahead
// with fast_forward). A child of a prefix subscription resumes alone,
// its catch-up pumped by pumpGroup while its siblings read on. A log
// that cannot be read now, though it may hold the position, ends the
// subscription "unavailable" there, as a catch-up that fails does, and a
// prefix subscription's channel tries again later (retryLater): skipping
// ahead or "expired" would lose what the log keeps. done says the
// subscription was dealt with: resumed, ended or waiting.
func (c *Conn) resume(w *writer, sub *Subscription, oos *store.OutOfSyncError) (done bool, _ error) {
	pos := oos.Position
	cur, cu, err := c.eng.chlog.Subscribe(c.ctx, sub.Cursor.Key(), store.Start{Position: &pos})
	switch {
	case c.ctx.Err() != nil:
		if err == nil {
			cur.Close() // its Follow of the channel with it
		}
		return false, c.ctx.Err()
	case errors.Is(err, store.ErrExpired):
		sub.retry = nil   // the caller deals with it for good
		return false, nil // ErrFuture too: another epoch's
	case err != nil && sub.prefixed():
		return true, c.retryLater(w, sub, err, oos) // resumes at oos when due
	case err != nil:
		return true, c.endUnavailable(w, sub, pos, err)
	}
	sub.Cursor.Close()
	sub.Cursor, sub.CatchUp, sub.retry = cur, cu, nil
	c.eng.counters.LogResumes.Add(1)
	return true, nil
}

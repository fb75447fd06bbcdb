package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// catchUp is the part of a subscription's history that the edge's replica
// does not hold: offsets from next up to until (exclusive, where the
// subscription's cursor starts), read from the log by the writer before
// it reads the cursor.
type catchUp struct {
	key         string
	next, until uint64
	lagged      int // times the log's copy was found behind until
}

// logBatch is how many messages one catch-up read asks the log for.
const logBatch = 256

// logSubscribe opens a subscription of a journal-backed edge: in the
// replica where it holds the start, else from the log up to the replica.
func (c *conn) logSubscribe(key string, start store.Start) (*store.Cursor, *catchUp, error) {
	st, j := c.srv.store, c.srv.journal
	switch {
	case start.Position != nil:
		if err := c.checkFuture(*start.Position); err != nil {
			return nil, nil, err
		}
		cur, err := st.Subscribe(key, start)
		if !errors.Is(err, store.ErrExpired) || start.Position.Epoch != j.Epoch() {
			return cur, nil, err
		}
		ctx, cancel := context.WithTimeout(c.ctx, logTimeout)
		defer cancel()
		ret := c.srv.retention(key).Normalized()
		f, ok, err := c.srv.logFirst(ctx, key, start.Position.Offset, ret, st.Now())
		if err != nil {
			return nil, nil, err
		}
		from := start.Position.Offset
		if ok {
			from = f.Offset
		}
		return c.withCatchUp(key, from)
	case start.HistoryCount > 0 || start.HistoryAge > 0:
		// The replica answers when its history starts after the oldest
		// offset it holds: it had older messages the history left out,
		// so the log would say the same. (No log request, and history
		// keeps working while NATS is away.)
		if cur, err := st.Subscribe(key, start); err == nil {
			if cur.Position().Offset > cur.Head() {
				return cur, nil, nil
			}
			cur.Close()
		}
		return c.historyOrLive(key, start.HistoryCount, start.HistoryAge)
	}
	cur, err := st.Subscribe(key, start)
	return cur, nil, err
}

// historyOrLive opens a subscription at the start of the log's history of
// key (its newest count messages no older than age), or live when the log
// has none. The live cursor is opened before the log is asked: a message
// stored meanwhile is then in the log's answer or after the cursor's
// start, never between them (it used to be lost to a subscriber whose
// subscribe crossed a channel's first publish).
func (c *conn) historyOrLive(key string, count int, age time.Duration) (*store.Cursor, *catchUp, error) {
	live, err := c.srv.store.Subscribe(key, store.Start{})
	if err != nil {
		return nil, nil, err
	}
	from, ok, err := c.srv.logHistoryStart(c.ctx, key, count, age)
	switch {
	case err != nil:
		live.Close()
		return nil, nil, err
	case !ok:
		return live, nil, nil
	}
	live.Close()
	return c.withCatchUp(key, from)
}

// checkFuture refuses, with store.ErrFuture, a position of the log's epoch
// past the log's last sequence + 1: no edge of the cluster assigned it.
// One past the replica but not the log is only not applied here yet; the
// cursor waits for it.
func (c *conn) checkFuture(p rtm.Position) error {
	if p.Epoch != c.srv.journal.Epoch() || p.Offset <= c.srv.store.Applied()+1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, logTimeout)
	defer cancel()
	_, last, err := c.srv.journal.Bounds(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", errLog, err)
	}
	if p.Offset > last+1 {
		return store.ErrFuture
	}
	return nil
}

// logOldest opens a subscription at the oldest message the channel's
// rule still keeps in the log: where a fast-forward lands.
func (c *conn) logOldest(key string) (*store.Cursor, *catchUp, error) {
	ret := c.srv.retention(key).Normalized()
	return c.historyOrLive(key, ret.HistoryCount, ret.TTL)
}

// withCatchUp opens a cursor at from if the replica holds it; else at the
// replica's oldest message, with the offsets before it to read from the
// log. The cursor is opened first, so that nothing committed meanwhile
// falls between the two.
func (c *conn) withCatchUp(key string, from uint64) (*store.Cursor, *catchUp, error) {
	st := c.srv.store
	p := rtm.Position{Epoch: c.srv.journal.Epoch(), Offset: from}
	cur, err := st.Subscribe(key, store.Start{Position: &p})
	if err == nil || !errors.Is(err, store.ErrExpired) {
		return cur, nil, err
	}
	if cur, err = st.Subscribe(key, store.Start{HistoryCount: 1 << 30}); err != nil {
		return nil, nil, err
	}
	until := cur.Position().Offset
	if from > until {
		// A start past what the replica holds (the channel is new here):
		// the channel exists now, so the cursor can wait at from.
		cur.Close()
		cur, err = st.Subscribe(key, store.Start{Position: &p})
		return cur, nil, err
	}
	if from == until {
		return cur, nil, nil
	}
	return cur, &catchUp{key: key, next: from, until: until}, nil
}

// pumpLog sends the next batch of a subscription's catch-up from the log,
// and hands the subscription over to its cursor once it reached it. A log
// that cannot be read ends the subscription with rtm/subscription/error
// "unavailable": the client resubscribes from its position.
func (c *conn) pumpLog(w *writer, sub *subscription) error {
	cu := sub.catchup
	ctx, cancel := context.WithTimeout(c.ctx, logTimeout)
	frames, more, err := c.srv.journal.Next(ctx, cu.key, cu.next, logBatch, maxBatchBytes)
	cancel()
	if err != nil {
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
	n := 0
	for n < len(frames) && frames[n].Offset < cu.until {
		n++
	}
	switch {
	case n < len(frames):
		sub.catchup = nil // the rest is in the replica
	case more == 0:
		// Nothing more, says the log's copy that answered: complete only
		// if that copy has reached where the replica starts.
		if c.logReached(sub, cu) {
			sub.catchup = nil
		}
	}
	if n > 0 {
		cu.next = frames[n-1].Offset + 1
	}
	w.logFrames = true
	err = c.send(w, sub, frames[:n])
	w.logFrames = false
	return err
}

// logLagTries bounds how often a catch-up waits for a lagging copy of the
// log (logLagPause apart) before it trusts the answer it has.
const (
	logLagTries = 50
	logLagPause = 20 * time.Millisecond
)

// logReached reports whether the log's copy answering reads holds the
// offsets up to the replica's start; if not, it pauses a little so that
// the writer asks again.
func (c *conn) logReached(sub *subscription, cu *catchUp) bool {
	ctx, cancel := context.WithTimeout(c.ctx, logTimeout)
	ok, err := c.srv.journal.Reached(ctx, cu.until-1)
	cancel()
	if ok || err != nil || cu.lagged >= logLagTries {
		if !ok {
			c.srv.log.Warn("catch-up: the log's copy lags; ending the catch-up on its answer",
				"subscription", sub.id, "until", cu.until, "err", err)
		}
		return true
	}
	cu.lagged++
	select {
	case <-time.After(logLagPause):
	case <-c.ctx.Done():
	}
	return false
}

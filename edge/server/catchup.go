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
		// As a live or history subscribe does: a purge another edge had
		// acknowledged is applied here before the position is judged.
		c.srv.awaitAcknowledged(c.ctx)
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
		c.srv.awaitAcknowledged(c.ctx)
		return c.logHistory(key, start)
	}
	c.srv.awaitAcknowledged(c.ctx)
	cur, err := st.Subscribe(key, start)
	return cur, nil, err
}

// ackWait bounds how long a subscribe waits for this edge to apply what
// the log had acknowledged; past it, it starts from what the edge has.
const ackWait = 2 * time.Second

// awaitAcknowledged waits, where other edges write to the log, until
// this edge's store has applied every message the log had acknowledged
// when the subscribe came: a live subscription then starts after each
// message a client could have been told was stored, by any edge, and a
// history counts back from there (before, on another edge than the
// publisher's, a live subscription could get a message acknowledged
// before it was asked for, and a history one message too many). An edge
// that cannot reach the log's leader, or does not catch up, within
// ackWait serves from what it has: a subscription keeps working while
// the log is away, ackWait later.
func (s *Server) awaitAcknowledged(ctx context.Context) {
	j := s.journal
	if !j.Shared() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, ackWait)
	defer cancel()
	last, err := j.Acknowledged(ctx)
	if err != nil {
		s.log.Debug("subscribe: the log's last offset is unknown; starting from this edge's", "err", err)
		return
	}
	for pause := logCaughtUpPause / 10; s.store.Applied() < last; pause = min(2*pause, logLagPause) {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			s.log.Debug("subscribe: this edge's feed lags the log; starting from what it applied",
				"applied", s.store.Applied(), "acknowledged", last)
			return
		case <-t.C:
		}
	}
}

// logHistory opens a history subscription of a journal-backed edge. The
// replica serves what it holds of the history; the log is asked only for
// the messages before the replica's oldest (its head), if the history
// reaches that far: a channel the replica holds from a later point than
// the log (it started following it then), or whose older blocks it let
// go. The replica's cursor is opened first, so a message stored meanwhile
// is after its start, never between the log's part and the replica's.
func (c *conn) logHistory(key string, start store.Start) (*store.Cursor, *catchUp, error) {
	cur, err := c.srv.store.Subscribe(key, start)
	if err != nil {
		return nil, nil, err
	}
	until := cur.Position().Offset
	if until > cur.Head() {
		// The replica had older messages the history left out: the log
		// would say the same. (No log request: history keeps working
		// while NATS is away.)
		return cur, nil, nil
	}
	sp := logSpan{count: start.HistoryCount, age: start.HistoryAge, before: until}
	sp.held = cur.Held(max(sp.count, 1))
	if sp.age <= 0 && sp.held >= sp.count {
		return cur, nil, nil
	}
	from, ok, err := c.srv.logHistoryStart(c.ctx, key, sp)
	switch {
	case err != nil:
		cur.Close()
		return nil, nil, err
	case !ok || from >= until:
		return cur, nil, nil
	}
	return cur, &catchUp{key: key, next: from, until: until}, nil
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
	c.srv.awaitAcknowledged(c.ctx)
	return c.logHistory(key, store.Start{HistoryCount: ret.HistoryCount, HistoryAge: ret.TTL})
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
		return c.failCatchUp(w, sub, err)
	}
	n := 0
	for n < len(frames) && frames[n].Offset < cu.until {
		n++
	}
	done := n < len(frames) // the rest is in the replica
	if !done && more == 0 {
		// Nothing more, says the log's copy that answered: complete only
		// if that copy has reached where the replica starts.
		if done, err = c.logReached(cu); err != nil {
			return c.failCatchUp(w, sub, err)
		}
	}
	if n > 0 {
		cu.next = frames[n-1].Offset + 1
	}
	w.logFrames = true
	err = c.send(w, sub, frames[:n])
	w.logFrames = false
	if err != nil || !done {
		return err
	}
	return c.endCatchUp(w, sub)
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

// logLagTries bounds how often a catch-up waits for a lagging copy of the
// log (logLagPause apart): as long as one log read may take. Past it the
// catch-up fails rather than end on the lagging copy's answer, which
// would leave a gap.
const (
	logLagPause = 20 * time.Millisecond
	logLagTries = int(logTimeout / logLagPause)
)

// errLogLags says the log's copy that answers reads stayed behind.
var errLogLags = errors.New("server: the log's copy answering reads stays behind this edge")

// logReached reports whether the log's copy answering reads holds the
// offsets up to the replica's start; if not, it pauses a little so that
// the writer asks again.
func (c *conn) logReached(cu *catchUp) (bool, error) {
	ctx, cancel := context.WithTimeout(c.ctx, logTimeout)
	ok, err := c.srv.journal.Reached(ctx, cu.until-1)
	cancel()
	switch {
	case err != nil:
		return false, fmt.Errorf("%w: %w", errLog, err)
	case ok:
		return true, nil
	case cu.lagged >= logLagTries:
		return false, fmt.Errorf("%w: offset %d", errLogLags, cu.until-1)
	}
	cu.lagged++
	t := time.NewTimer(logLagPause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.ctx.Done():
	}
	return false, nil
}

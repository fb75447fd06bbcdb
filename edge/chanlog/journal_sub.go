package chanlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Subscribe opens a subscription: in the
// replica where it holds the start, else from the log up to the replica.
func (l *Journaled) Subscribe(ctx context.Context, key string, start store.Start) (*store.Cursor, *CatchUp, error) {
	st, j := l.st, l.j
	switch {
	case start.Position != nil:
		if err := l.checkFuture(ctx, *start.Position); err != nil {
			return nil, nil, err
		}
		cur, err := st.Subscribe(key, start)
		if !errors.Is(err, store.ErrExpired) || start.Position.Epoch != j.Epoch() {
			return cur, nil, err
		}
		ctx, cancel := context.WithTimeout(ctx, logTimeout)
		defer cancel()
		ret := l.retention(key).Normalized()
		f, ok, err := l.logFirst(ctx, key, start.Position.Offset, ret, st.Now())
		if err != nil {
			return nil, nil, err
		}
		from := start.Position.Offset
		if ok {
			from = f.Offset
		}
		return l.withCatchUp(key, from)
	case start.HistoryCount > 0 || start.HistoryAge > 0:
		l.awaitAcknowledged(ctx)
		return l.history(ctx, key, start)
	}
	l.awaitAcknowledged(ctx)
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
func (l *Journaled) awaitAcknowledged(ctx context.Context) {
	j := l.j
	if !j.Shared() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, ackWait)
	defer cancel()
	last, err := j.Acknowledged(ctx)
	if err != nil {
		l.log.Debug("subscribe: the log's last offset is unknown; starting from this edge's", "err", err)
		return
	}
	for pause := logCaughtUpPause / 10; l.st.Applied() < last; pause = min(2*pause, logLagPause) {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			l.log.Debug("subscribe: this edge's feed lags the log; starting from what it applied",
				"applied", l.st.Applied(), "acknowledged", last)
			return
		case <-t.C:
		}
	}
}

// history opens a history subscription. The
// replica serves what it holds of the history; the log is asked only for
// the messages before the replica's oldest (its head), if the history
// reaches that far: a channel the replica holds from a later point than
// the log (it started following it then), or whose older blocks it let
// go. The replica's cursor is opened first, so a message stored meanwhile
// is after its start, never between the log's part and the replica's.
func (l *Journaled) history(ctx context.Context, key string, start store.Start) (*store.Cursor, *CatchUp, error) {
	cur, err := l.st.Subscribe(key, start)
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
	from, ok, err := l.logHistoryStart(ctx, key, sp)
	switch {
	case err != nil:
		cur.Close()
		return nil, nil, err
	case !ok || from >= until:
		return cur, nil, nil
	}
	return cur, l.catchUp(key, from, until), nil
}

// checkFuture refuses, with store.ErrFuture, a position of the log's epoch
// past the log's last sequence + 1: no edge of the cluster assigned it.
// One past the replica but not the log is only not applied here yet; the
// cursor waits for it.
func (l *Journaled) checkFuture(ctx context.Context, p rtm.Position) error {
	if p.Epoch != l.j.Epoch() || p.Offset <= l.st.Applied()+1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	_, last, err := l.j.Bounds(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if p.Offset > last+1 {
		return store.ErrFuture
	}
	return nil
}

// logOldest opens a subscription at the oldest message the channel's
// rule still keeps in the log: where a fast-forward lands.
func (l *Journaled) Oldest(ctx context.Context, key string) (*store.Cursor, *CatchUp, error) {
	ret := l.retention(key).Normalized()
	l.awaitAcknowledged(ctx)
	return l.history(ctx, key, store.Start{HistoryCount: ret.HistoryCount, HistoryAge: ret.TTL})
}

// withCatchUp opens a cursor at from if the replica holds it; else at the
// replica's oldest message, with the offsets before it to read from the
// log. The cursor is opened first, so that nothing committed meanwhile
// falls between the two.
func (l *Journaled) withCatchUp(key string, from uint64) (*store.Cursor, *CatchUp, error) {
	st := l.st
	p := rtm.Position{Epoch: l.j.Epoch(), Offset: from}
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
	return cur, l.catchUp(key, from, until), nil
}

package chanlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Subscribe opens a subscription: in the replica where it holds the
// start, else from the log up to the replica. What it waits for of the
// log shares one deadline, the log's publish timeout.
func (l *Journaled) Subscribe(ctx context.Context, key string, start store.Start) (*store.Cursor, *CatchUp, error) {
	ctx, cancel := context.WithTimeout(ctx, l.j.PublishTimeout())
	defer cancel()
	// As a live or history subscribe does, a subscribe at a position
	// first has the replica apply what the log had acknowledged (a purge
	// another edge made among it) before the position is judged.
	release, err := l.caughtUp(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	cur, cu, err := l.subscribe(ctx, key, start)
	if err != nil {
		release()
		return nil, nil, err
	}
	cur.OnClose(release)
	return cur, cu, nil
}

// subscribe is Subscribe once the replica has caught up.
func (l *Journaled) subscribe(ctx context.Context, key string, start store.Start) (*store.Cursor, *CatchUp, error) {
	st, j := l.st, l.jn(key)
	switch {
	case start.Position != nil:
		if err := l.checkFuture(ctx, key, *start.Position); err != nil {
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
		return l.history(ctx, key, start)
	}
	cur, err := st.Subscribe(key, start)
	return cur, nil, err
}

// caughtUp waits until the replica holds every message of key the log
// had acknowledged when it was called (awaitAcknowledged), and has it
// go on holding the channel until release (Journal.Follow) where the
// store holds only the channels followed.
func (l *Journaled) caughtUp(ctx context.Context, key string) (release func(), err error) {
	if !l.j.Interest() {
		return func() {}, l.awaitAcknowledged(ctx, key)
	}
	release, err = l.jn(key).Follow(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return release, nil
}

// applied is the offset up to which the replica holds key.
func (l *Journaled) applied(key string) uint64 {
	a, _ := l.jn(key).Applied(key)
	return a
}

// awaitAcknowledged waits, where other edges write to the log, until
// this edge's store has applied every message the log had acknowledged
// when the subscribe came: a live subscription then starts after each
// message a client could have been told was stored, by any edge, and a
// history counts back from there (before, on another edge than the
// publisher's, a live subscription could get a message acknowledged
// before it was asked for, and a history one message too many). An edge
// that cannot reach the log's leader, or does not catch up, before ctx
// ends fails the subscribe with ErrUnreadable (unavailable, which the
// client may retry): starting from what it has would break that promise,
// as the 2 s wait this replaced did during failovers (the chaos test).
func (l *Journaled) awaitAcknowledged(ctx context.Context, key string) error {
	if !l.j.Shared() {
		return nil
	}
	return l.awaitApplied(ctx, key)
}

// awaitApplied waits until this edge's store has applied every message
// the log had acknowledged when it was called (another edge's purge
// marker among them), or fails with ErrUnreadable once ctx ends.
func (l *Journaled) awaitApplied(ctx context.Context, key string) error {
	j := l.jn(key)
	last, err := l.acknowledged(ctx, j)
	if err != nil {
		return err
	}
	part := Partition(key, len(l.parts))
	for pause := logCaughtUpPause / 10; l.st.Applied(part) < last; pause = min(2*pause, logLagPause) {
		if err := pauseCtx(ctx, pause); err != nil {
			return fmt.Errorf("%w: this edge's feed stays behind the log's acknowledged offset %d (applied %d): %w",
				ErrUnreadable, last, l.st.Applied(part), err)
		}
	}
	return nil
}

// acknowledged asks the log's leader for its last offset (Acknowledged)
// until one answers or ctx ends: during an election none does.
func (l *Journaled) acknowledged(ctx context.Context, j Journal) (uint64, error) {
	for pause := logLagPause; ; pause = min(2*pause, time.Second) {
		last, err := j.Acknowledged(ctx)
		if err == nil {
			return last, nil
		}
		if perr := pauseCtx(ctx, pause); perr != nil {
			return 0, fmt.Errorf("%w: the log's acknowledged offset: %w", ErrUnreadable, err)
		}
	}
}

// pauseCtx waits d, or until ctx ends (its error).
func pauseCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
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
// cursor waits for it. Where other edges write, the log's leader may not
// have applied yet what another edge's feed delivered (a follower's copy
// can be ahead of the leader's for a few milliseconds, a leader just
// elected for longer): a position beyond both the leader's answer and
// this edge's replica is waited for, within ctx, and refused only if it
// stays beyond. Without a leader's answer, ErrUnreadable.
func (l *Journaled) checkFuture(ctx context.Context, key string, p rtm.Position) error {
	if p.Epoch != l.jn(key).Epoch() || p.Offset <= l.applied(key)+1 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	answered := false // a leader answered, that p is beyond
	for pause := logCaughtUpPause; ; pause = min(2*pause, futurePause) {
		_, last, err := l.jn(key).Bounds(ctx)
		switch {
		case err == nil && p.Offset <= last+1, p.Offset <= l.applied(key)+1:
			return nil
		case err == nil && !l.j.Shared():
			return store.ErrFuture // the only writer's log: no other copy is ahead
		}
		answered = answered || err == nil
		if pauseCtx(ctx, pause) != nil {
			if !answered {
				return fmt.Errorf("%w: %w", ErrUnreadable, err)
			}
			return store.ErrFuture
		}
	}
}

// futurePause bounds the pause between two looks of checkFuture at a
// position beyond the log's leader.
const futurePause = 100 * time.Millisecond

// logOldest opens a subscription at the oldest message the channel's
// rule still keeps in the log: where a fast-forward lands.
func (l *Journaled) Oldest(ctx context.Context, key string) (*store.Cursor, *CatchUp, error) {
	ret := l.retention(key).Normalized()
	ctx, cancel := context.WithTimeout(ctx, l.j.PublishTimeout())
	defer cancel()
	release, err := l.caughtUp(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	cur, cu, err := l.history(ctx, key, store.Start{HistoryCount: ret.HistoryCount, HistoryAge: ret.TTL})
	if err != nil {
		release()
		return nil, nil, err
	}
	cur.OnClose(release)
	return cur, cu, nil
}

// withCatchUp opens a cursor at from if the replica holds it; else at the
// replica's oldest message, with the offsets before it to read from the
// log. The cursor is opened first, so that nothing committed meanwhile
// falls between the two.
func (l *Journaled) withCatchUp(key string, from uint64) (*store.Cursor, *CatchUp, error) {
	st := l.st
	p := rtm.Position{Epoch: l.jn(key).Epoch(), Offset: from}
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

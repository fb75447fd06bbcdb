package chanlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// logTimeout bounds the log reads a request makes.
const logTimeout = 10 * time.Second

// maxLogHistory bounds how many messages a history.count subscription
// looks up in the log one by one; past it the count is cut.
const maxLogHistory = 1000

// logRead serves rtm/read from the log when the store cannot: the
// message at or after at (ErrExpired if the log or the channel's rule has
// let it go), or the newest readable one (with at nil, a frame with an
// offset but not found is the newest one, no longer readable).
func (l *Journaled) logRead(ctx context.Context, key string, at *rtm.Position) (store.Frame, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	ret, now := l.retention(key).Normalized(), l.st.Now()
	if at == nil {
		f, ok, err := l.logNewest(ctx, key)
		return f, ok && readable(ret, now, f.Time, 0), err
	}
	return l.logFirst(ctx, key, at.Offset, ret, now)
}

// logNewest returns the channel's newest message from a copy of the log
// that holds what this edge had applied when the request came (see
// logCaughtUp), with the channel's purges applied. Asking whether the
// copy had caught up and then reading was two requests, which two copies
// could answer: the chaos test's stale-read saw a read return a message
// purged 3 s before, from a copy the SIGSTOP of its edge held behind.
func (l *Journaled) logNewest(ctx context.Context, key string) (store.Frame, bool, error) {
	need := l.jn(key).Shown()
	for pause := logCaughtUpPause; ; pause = min(2*pause, logLagPause) {
		f, ok, reached, err := l.jn(key).Newest(ctx, key, need)
		if err != nil {
			return store.Frame{}, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		if reached {
			return f, ok, nil
		}
		if err := pauseCtx(ctx, pause); err != nil {
			return store.Frame{}, false, fmt.Errorf("%w: its copy stays behind offset %d: %w", ErrUnreadable, need, err)
		}
	}
}

// leaderRead serves rtm/read at a position this edge has not applied
// yet (another edge handed it out) from the log's leader: the channel's
// first message at or after from, whichever edge published it. Found is
// false when the rule no longer keeps it.
func (l *Journaled) leaderRead(ctx context.Context, key string, from uint64) (store.Frame, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	if err := l.checkReadable(ctx, key, from); err != nil {
		return store.Frame{}, false, err
	}
	f, ok, err := l.jn(key).LeaderRead(ctx, key, from)
	if err != nil {
		return store.Frame{}, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	ret := l.retention(key).Normalized()
	return f, ok && readable(ret, l.st.Now(), f.Time, 0), nil
}

// logFirst returns the channel's first message at or after offset from
// the log, or ErrExpired if the messages from there on are no longer all
// readable.
func (l *Journaled) logFirst(ctx context.Context, key string, from uint64, ret store.Retention, now int64) (store.Frame, bool, error) {
	if err := l.logCaughtUp(ctx, key, l.jn(key).Shown()); err != nil {
		return store.Frame{}, false, err
	}
	if err := l.checkReadable(ctx, key, from); err != nil {
		return store.Frame{}, false, err
	}
	fs, newer, err := l.jn(key).Next(ctx, key, from, 1, 0)
	if err != nil {
		return store.Frame{}, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if len(fs) == 0 {
		return store.Frame{}, false, nil
	}
	if !readable(ret, now, fs[0].Time, newer) {
		return store.Frame{}, false, store.ErrExpired
	}
	return fs[0], true, nil
}

// logCaughtUpPause is the first pause between two looks at a lagging
// copy of the log; it doubles up to logLagPause.
const logCaughtUpPause = time.Millisecond

// logCaughtUp waits until the copy of the log that answers this edge's
// reads holds offset need: what the edge's replica had applied when the
// request came. JetStream answers direct gets from any replica of the
// stream (the edge's own node first), and a follower may lag this
// edge's feed, which the stream leader serves: its answer about a
// channel would leave out messages the edge has shown or acknowledged to
// its clients (a history right after an acknowledged publish that did
// not hold it; a purge not yet seen). A copy that does not catch up
// within ctx is an error, never an answer.
func (l *Journaled) logCaughtUp(ctx context.Context, key string, need uint64) error {
	if need == 0 {
		return nil
	}
	pause := logCaughtUpPause
	for {
		ok, err := l.jn(key).Reached(ctx, need)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		if ok {
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: its copy stays behind offset %d: %w", ErrUnreadable, need, ctx.Err())
		case <-t.C:
		}
		pause = min(2*pause, logLagPause)
	}
}

// logSpan is the part of a channel's history a history request asks the
// log for: the messages before offset before (0: all of them), held
// newer ones being already known (the replica holds them from before on).
type logSpan struct {
	count  int           // the history's count (0: none)
	age    time.Duration // the history's age (0: none)
	before uint64        // the log answers about offsets below it (0: any)
	held   int           // messages at or after before, in the history
}

// logHistoryStart returns the offset a history starts at in the log:
// the oldest readable message before sp.before among the newest
// sp.count of the channel and those younger than sp.age. ok is false
// when none qualifies (the history starts at sp.before). The log is
// read once its copy holds what this edge had applied.
func (l *Journaled) logHistoryStart(ctx context.Context, key string, sp logSpan) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	if sp.before == 1 {
		return 0, false, nil // nothing is older than the log's first offset
	}
	if err := l.logCaughtUp(ctx, key, l.jn(key).Shown()); err != nil {
		return 0, false, err
	}
	start, found, err := l.logWalk(ctx, key, sp)
	if err != nil || !found && sp.age <= 0 {
		return start, found, err
	}
	if sp.age > 0 {
		// The walk found the old messages the history rule keeps;
		// FirstSince finds those the TTL keeps.
		ret, now := l.retention(key).Normalized(), l.st.Now()
		f, ok, err := l.jn(key).FirstSince(ctx, key, time.Unix(0, now-int64(min(sp.age, ret.TTL))))
		if err != nil {
			return 0, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		if ok && (sp.before == 0 || f.Offset < sp.before) && (!found || f.Offset < start) {
			start, found = f.Offset, true
		}
	}
	if !found {
		return 0, false, nil
	}
	return l.pastPurge(ctx, key, start, sp.before)
}

// pastPurge moves the start of a history in the log past the channel's
// last purge: the log's copy is purged after every edge's store (the
// journal's Purge), so for a moment it still holds messages a purge
// dropped, which a subscriber would get, or miss without a word when
// the log drops them as it reads on. ok is false when nothing before
// offset before (0: any) is left.
func (l *Journaled) pastPurge(ctx context.Context, key string, start, before uint64) (uint64, bool, error) {
	through, err := l.jn(key).PurgedThrough(ctx, key)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	case start > through:
		return start, true, nil
	case before == 0 || through+1 < before:
		return through + 1, true, nil
	}
	return 0, false, nil
}

// logWalk walks the channel's messages before sp.before newest first,
// one lookup each (the log numbers all channels together, so a
// channel's messages can only be counted this way), while they belong to
// the history; it returns the oldest that does.
func (l *Journaled) logWalk(ctx context.Context, key string, sp logSpan) (uint64, bool, error) {
	ret, now := l.retention(key).Normalized(), l.st.Now()
	walk := sp.count
	if sp.age > 0 {
		walk = max(sp.count, ret.HistoryCount)
	}
	var start uint64
	found := false
	upTo := uint64(0)
	if sp.before > 0 {
		upTo = sp.before - 1
	}
	for newer := sp.held; newer < walk && newer-sp.held < maxLogHistory; newer++ {
		f, ok, err := l.jn(key).Last(ctx, key, upTo)
		if err != nil {
			return 0, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
		}
		if !ok || !readable(ret, now, f.Time, uint64(newer)) ||
			newer >= sp.count && now-f.Time > int64(sp.age) {
			break
		}
		start, found, upTo = f.Offset, true, f.Offset-1
		if upTo == 0 {
			break
		}
	}
	return start, found, nil
}

// checkReadable returns store.ErrExpired unless the log still holds all
// of key's messages from offset from on: the log let none of them go
// (its limits), and no purge dropped them (as on an edge alone, a
// position up to a purge is expired, one after it reads on).
func (l *Journaled) checkReadable(ctx context.Context, key string, from uint64) error {
	first, _, err := l.jn(key).Bounds(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if from < first {
		return store.ErrExpired // the log let them go
	}
	through, err := l.jn(key).PurgedThrough(ctx, key)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if from <= through {
		return store.ErrExpired
	}
	return nil
}

// Read reads the replica, and the log where the replica cannot answer.
func (l *Journaled) Read(ctx context.Context, key string, at *rtm.Position) (Reading, error) {
	epoch := l.epoch(key)
	if l.j.Shared() {
		// As a subscribe does: this edge's store first applies what the
		// log had acknowledged when the read came, by any edge (a newer
		// message, a purge). Its answer then holds all of that, and what
		// this edge has shown its own clients. (Asking the leader for
		// the newest instead missed those: the leader may apply a
		// message after a follower's feed delivered it, and after a
		// purge it answered "none" while this edge had shown a newer
		// message; the chaos test's stale-read.)
		actx, cancel := context.WithTimeout(ctx, l.j.PublishTimeout())
		release, err := l.caughtUp(actx, key)
		cancel()
		if err != nil {
			return Reading{}, err
		}
		defer release()
	}
	applied := l.applied(key)
	f, found, err := l.st.Read(key, at)
	switch {
	case at != nil && l.j.Shared() && at.Epoch == epoch && at.Offset > applied:
		// A position another edge handed out that this edge has not
		// applied yet: the log's leader has it.
		f, found, err = l.leaderRead(ctx, key, at.Offset)
	case at == nil && !found || errors.Is(err, store.ErrExpired) && at.Epoch == epoch:
		// Not in this edge's replica: older, or a channel it does not
		// follow. The log has it, if the channel's rule still keeps it.
		f, found, err = l.logRead(ctx, key, at)
	}
	if err != nil {
		return Reading{}, err
	}
	r := Reading{Frame: f, Found: found, Position: rtm.Position{Epoch: epoch, Offset: applied + 1}}
	switch {
	case found:
		r.Position.Offset = f.Offset
	case at != nil:
		r.Position = *at
	case f.Offset == 0:
		// The log holds nothing of the channel: 0:0, as an edge alone
		// answers for a channel it does not hold. Not the next
		// position, which the channel's first message may take: a
		// compare-and-set at it would then match that message too.
		r.Position = rtm.Position{}
	}
	return r, nil
}

// History reads a history page from the log, which holds channels this
// edge does not follow.
func (l *Journaled) History(ctx context.Context, key string, at *rtm.Position, count, limit int, page func([]store.Frame, uint64, bool) error) error {
	var from uint64
	if at != nil {
		if at.Epoch != l.epoch(key) {
			return store.ErrExpired
		}
		from = at.Offset
	} else {
		start, found, err := l.logHistoryStart(ctx, key, logSpan{count: count})
		if err != nil {
			return err
		}
		if !found {
			return page(nil, l.epoch(key), false)
		}
		from = start
	}
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	if err := l.logCaughtUp(ctx, key, l.jn(key).Shown()); err != nil {
		return err
	}
	if err := l.checkReadable(ctx, key, from); err != nil {
		return err
	}
	frames, more, err := l.jn(key).Next(ctx, key, from, limit, 0)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	ret, now := l.retention(key).Normalized(), l.st.Now()
	if len(frames) > 0 && !readable(ret, now, frames[0].Time, uint64(len(frames)-1)+more) {
		// The oldest asked for is past its retention: the same answer a
		// subscription at that position gets.
		return store.ErrExpired
	}
	return page(frames, l.epoch(key), more > 0)
}

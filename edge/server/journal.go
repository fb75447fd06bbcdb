package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Journal is the log of record of a durable edge or of a cluster of
// edges (edge/journal on NATS JetStream). With one, a publish is
// acknowledged once the log stored it, offsets are the log's sequence
// numbers, the server's store is the log's replica (fed by the journal,
// not appended to by the server), and what the store does not hold
// (older history, a channel this edge has not followed) is read from the
// log.
type Journal interface {
	// Epoch is the log's incarnation: the EPOCH of every position.
	Epoch() uint64
	// Retention is how long the log keeps a message (0: no age limit).
	Retention() time.Duration
	// PublishFrom stores payload as the next message of the store key's
	// channel; done gets its offset once the log stored it and the
	// server's store holds it, or an error. done must not block. msgID
	// ("": one made up) names the message: one the log stored within its
	// duplicates window is not stored again, and done gets the first
	// one's offset. origin ("": none) is kept with the message: the
	// replica of every edge, and the frames Next returns, carry it
	// (store.Frame.Origin).
	PublishFrom(key string, payload []byte, msgID, origin string, done func(offset uint64, err error))
	// PublishExpect is PublishFrom stored only if key's newest message is
	// at offset last (0: none); else done gets an error that is a
	// store.ErrMismatch, with a Resent() (uint64, bool) method saying
	// whether the publish was sent more than once and where the newest
	// message is: then that one may be its own first send.
	// A ttl above 0 says the message arms a dead man's switch of ttl
	// seconds publishing ttlMessage, which the log keeps with it and every
	// edge's feed announces to the function OnSwitch set.
	//
	// ctx's deadline, if before the log's publish timeout, is the
	// publish's: past it done gets an error at once (a request's one
	// deadline, part of which its reads took).
	PublishExpect(ctx context.Context, key string, payload []byte, msgID, origin string, last uint64, ttl int64, ttlMessage []byte, done func(offset uint64, err error))
	// PublishArming is PublishFrom of a message that arms a dead man's
	// switch, as PublishExpect's ttl says (the msgID is made up), with
	// ctx's deadline as PublishExpect's.
	PublishArming(ctx context.Context, key string, payload []byte, origin string, ttl int64, ttlMessage []byte, done func(offset uint64, err error))
	// OnSwitch sets the function the feed tells of each switch it applies
	// (the message at offset of key, stored at stored; replayed: stored
	// before the log opened, a restart's); it must not block. The server
	// sets it before the feed starts.
	OnSwitch(f func(key string, offset uint64, stored time.Time, ttl int64, message []byte, replayed bool))
	// Latest returns key's newest message (at 0) or its message at
	// offset at, as the log's leader holds it (no lagging copy), with
	// the Msg-Id it was published with.
	Latest(ctx context.Context, key string, at uint64) (store.Frame, string, bool, error)
	// Purge drops key's messages up to offset through (its newest) from
	// every edge's store and the log, if through is key's newest still
	// (else, or if a message was stored right after the purge, done gets
	// a store.ErrMismatch, as PublishExpect's: purge again); done gets
	// the offset of the purge, which the server's store has applied.
	Purge(ctx context.Context, key string, through uint64, msgID string, done func(offset uint64, err error))
	// PurgedThrough returns the offset up to which key was last purged
	// (0: never): positions up to it are expired.
	PurgedThrough(ctx context.Context, key string) (uint64, error)
	// Await waits until the server's store holds the message published
	// with msgID at offset.
	Await(ctx context.Context, offset uint64, msgID string) error
	// Next returns up to n messages of key from offset from on, at most
	// about maxBytes of them, and how many more follow the last one.
	Next(ctx context.Context, key string, from uint64, n, maxBytes int) ([]store.Frame, uint64, error)
	// Last returns the newest message of key at or before upTo (0: any).
	Last(ctx context.Context, key string, upTo uint64) (store.Frame, bool, error)
	// FirstSince returns the oldest message of key stored at or after t.
	FirstSince(ctx context.Context, key string, t time.Time) (store.Frame, bool, error)
	// Shared reports whether other edges write to the log, so that a
	// read must ask its leader (LeaderRead) to see what they stored.
	Shared() bool
	// Acknowledged returns the log's last offset as its leader holds it
	// some time after the call began: every publish acknowledged before,
	// by any edge, is at or below it.
	Acknowledged(ctx context.Context) (uint64, error)
	// LeaderRead returns, as the log's leader holds it, key's newest
	// message (from 0) or its first message at or after from.
	LeaderRead(ctx context.Context, key string, from uint64) (store.Frame, bool, error)
	// Reached reports whether the log's copy that answers reads holds
	// offset (a follower may lag a little).
	Reached(ctx context.Context, offset uint64) (bool, error)
	// Bounds returns the log's first and last offsets.
	Bounds(ctx context.Context) (first, last uint64, err error)
	// Ready says why the log cannot serve (nil if it can).
	Ready() error
	// PublishTimeout is a publish's one deadline: past it, done gets an
	// error that says whether the message may have been stored
	// (store.ErrFateUnknown) or surely was not (store.ErrNotStored).
	PublishTimeout() time.Duration
	// ResolveWindow is how long after a publish whose fate is unknown
	// the log is asked about it, later publishes held meanwhile.
	ResolveWindow() time.Duration
	// DuplicatesWindow is how long a msgID, once stored, keeps a
	// publish with the same one from being stored again.
	DuplicatesWindow() time.Duration
}

// logTimeout bounds the log reads a request makes.
const logTimeout = 10 * time.Second

// maxLogHistory bounds how many messages a history.count subscription
// looks up in the log one by one; past it the count is cut.
const maxLogHistory = 1000

// errLog is an internal error reading the log; clients see no detail.
var errLog = errors.New("server: reading the log")

// readable reports whether a message stored at t, with newer messages of
// its channel after it, may still be read under r: younger than the TTL,
// or one of the newest HistoryCount younger than HistoryAge.
func readable(r store.Retention, now, t int64, newer uint64) bool {
	age := now - t
	if age <= int64(r.TTL) {
		return true
	}
	return r.HistoryCount > 0 && newer < uint64(r.HistoryCount) && age <= int64(r.HistoryAge)
}

// logRead serves rtm/read from the log when the store cannot: the
// message at or after at (ErrExpired if the log or the channel's rule has
// let it go), or the newest readable one (with at nil, a frame with an
// offset but not found is the newest one, no longer readable).
func (s *Server) logRead(ctx context.Context, key string, at *rtm.Position) (store.Frame, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	j, ret, now := s.journal, s.retention(key).Normalized(), s.store.Now()
	if at == nil {
		if err := s.logCaughtUp(ctx, s.store.Applied()); err != nil {
			return store.Frame{}, false, err
		}
		f, ok, err := j.Last(ctx, key, 0)
		if err != nil {
			return store.Frame{}, false, fmt.Errorf("%w: %w", errLog, err)
		}
		return f, ok && readable(ret, now, f.Time, 0), nil
	}
	return s.logFirst(ctx, key, at.Offset, ret, now)
}

// leaderRead serves rtm/read on an edge of a cluster from the log's
// leader: the channel's newest message, or its first at or after at,
// whichever edge published it. A client that was told a message is
// stored, by any edge, then reads it on this one behind a load balancer
// (this edge's feed may not have brought it yet: 3 reads in 600 answered
// null). Found is false when the rule no longer keeps the newest.
func (s *Server) leaderRead(ctx context.Context, key string, at *rtm.Position) (store.Frame, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	var from uint64
	if at != nil {
		if err := s.checkReadable(ctx, key, at.Offset); err != nil {
			return store.Frame{}, false, err
		}
		from = at.Offset
	}
	f, ok, err := s.journal.LeaderRead(ctx, key, from)
	if err != nil {
		return store.Frame{}, false, fmt.Errorf("%w: %w", errLog, err)
	}
	ret := s.retention(key).Normalized()
	return f, ok && readable(ret, s.store.Now(), f.Time, 0), nil
}

// logFirst returns the channel's first message at or after offset from
// the log, or ErrExpired if the messages from there on are no longer all
// readable.
func (s *Server) logFirst(ctx context.Context, key string, from uint64, ret store.Retention, now int64) (store.Frame, bool, error) {
	if err := s.logCaughtUp(ctx, s.store.Applied()); err != nil {
		return store.Frame{}, false, err
	}
	if err := s.checkReadable(ctx, key, from); err != nil {
		return store.Frame{}, false, err
	}
	fs, newer, err := s.journal.Next(ctx, key, from, 1, 0)
	if err != nil {
		return store.Frame{}, false, fmt.Errorf("%w: %w", errLog, err)
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
func (s *Server) logCaughtUp(ctx context.Context, need uint64) error {
	if need == 0 {
		return nil
	}
	pause := logCaughtUpPause
	for {
		ok, err := s.journal.Reached(ctx, need)
		if err != nil {
			return fmt.Errorf("%w: %w", errLog, err)
		}
		if ok {
			return nil
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: its copy stays behind offset %d: %w", errLog, need, ctx.Err())
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
func (s *Server) logHistoryStart(ctx context.Context, key string, sp logSpan) (uint64, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, logTimeout)
	defer cancel()
	if sp.before == 1 {
		return 0, false, nil // nothing is older than the log's first offset
	}
	if err := s.logCaughtUp(ctx, s.store.Applied()); err != nil {
		return 0, false, err
	}
	start, found, err := s.logWalk(ctx, key, sp)
	if err != nil || !found && sp.age <= 0 {
		return start, found, err
	}
	if sp.age > 0 {
		// The walk found the old messages the history rule keeps;
		// FirstSince finds those the TTL keeps.
		ret, now := s.retention(key).Normalized(), s.store.Now()
		f, ok, err := s.journal.FirstSince(ctx, key, time.Unix(0, now-int64(min(sp.age, ret.TTL))))
		if err != nil {
			return 0, false, fmt.Errorf("%w: %w", errLog, err)
		}
		if ok && (sp.before == 0 || f.Offset < sp.before) && (!found || f.Offset < start) {
			start, found = f.Offset, true
		}
	}
	if !found {
		return 0, false, nil
	}
	return s.pastPurge(ctx, key, start, sp.before)
}

// pastPurge moves the start of a history in the log past the channel's
// last purge: the log's copy is purged after every edge's store (the
// journal's Purge), so for a moment it still holds messages a purge
// dropped, which a subscriber would get, or miss without a word when
// the log drops them as it reads on. ok is false when nothing before
// offset before (0: any) is left.
func (s *Server) pastPurge(ctx context.Context, key string, start, before uint64) (uint64, bool, error) {
	through, err := s.journal.PurgedThrough(ctx, key)
	switch {
	case err != nil:
		return 0, false, fmt.Errorf("%w: %w", errLog, err)
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
func (s *Server) logWalk(ctx context.Context, key string, sp logSpan) (uint64, bool, error) {
	ret, now := s.retention(key).Normalized(), s.store.Now()
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
		f, ok, err := s.journal.Last(ctx, key, upTo)
		if err != nil {
			return 0, false, fmt.Errorf("%w: %w", errLog, err)
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
func (s *Server) checkReadable(ctx context.Context, key string, from uint64) error {
	first, _, err := s.journal.Bounds(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", errLog, err)
	}
	if from < first {
		return store.ErrExpired // the log let them go
	}
	through, err := s.journal.PurgedThrough(ctx, key)
	if err != nil {
		return fmt.Errorf("%w: %w", errLog, err)
	}
	if from <= through {
		return store.ErrExpired
	}
	return nil
}

// endCatchUp hands a subscription whose catch-up from the log is done over
// to its cursor, unless a purge dropped messages the catch-up still
// owed: the log went on past them without a word, and the cursor, at
// the replica's start, may read on past the purge as well (its edge
// applied it before the cursor was opened, or has not yet), so the
// subscription is out of sync.
func (c *conn) endCatchUp(w *writer, sub *subscription) error {
	cu := sub.catchup
	ctx, cancel := context.WithTimeout(c.ctx, logTimeout)
	through, err := c.srv.journal.PurgedThrough(ctx, cu.key)
	cancel()
	if err != nil {
		return c.failCatchUp(w, sub, fmt.Errorf("%w: %w", errLog, err))
	}
	sub.catchup = nil
	if through < cu.next {
		return nil
	}
	epoch := sub.cursor.Position().Epoch
	return c.outOfSync(w, sub, &store.OutOfSyncError{Missed: 1,
		Position: rtm.Position{Epoch: epoch, Offset: cu.next}, Head: rtm.Position{Epoch: epoch, Offset: through + 1}})
}

package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nuid"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// On a durable or clustered edge, a write's position (compare-and-set)
// and read (the previous message) are checked by the log itself, in one
// step with the append: the edge reads the channel's newest message from
// the log's leader, checks the condition against it, and publishes
// expecting that very message to be the channel's newest still (the
// journal's PublishExpect). Stored, the message it replaced is exactly
// the one read; refused, another writer came between, and the edge reads
// again: a compare-and-set then finds the channel moved on
// (position_mismatch, with the newer message), a plain read of the
// previous message tries again. The same as an edge alone does under its
// channel's writer lock, across every edge of a cluster.

// logWrite is a publish, write or delete with read or position on an
// edge with a journal.
type logWrite struct {
	channel string
	payload []byte
	origin  string        // the connection to exclude (exclude_self), or ""
	expect  *rtm.Position // a write's position
	asked   string        // the position as the client wrote it
	read    string
	// ttl, when not 0, arms a dead man's switch (ttl.go) with
	// ttlPayload once the message is stored.
	ttl        int64
	ttlPayload []byte
}

// logPublishIf serves w. It waits for the log, on the connection's
// reader: the request needs the channel's newest message, and the
// replies of the publishes before it leave first.
func (c *conn) logPublishIf(env *rtm.Envelope, w logWrite) (any, error) {
	key := storeKey(c.app, w.channel)
	if err := c.srv.admitChannel(c.app, key); err != nil {
		return nil, err
	}
	c.drainAcks() // this connection's earlier publishes are in the log first
	ctx, cancel := c.srv.requestContext(c.ctx)
	defer cancel()
	if w.expect == nil && w.read == "" {
		// ttl alone: a plain publish, waited for to arm the switch.
		offset, err := waitLog(ctx, func(done func(uint64, error)) {
			c.srv.journal.PublishArming(ctx, key, w.payload, w.origin, w.ttl, w.ttlPayload, done)
		})
		if err != nil {
			return nil, c.logError(err)
		}
		return c.logStored(key, w, offset, store.Prior{})
	}
	offset, prior, mismatch, err := c.logCondPublish(ctx, key, w)
	switch {
	case mismatch:
		e := &rtm.Error{Code: rtm.CodePositionMismatch,
			Reason: "position " + w.asked + " is not the channel's newest message (" + prior.Position.String() + "); nothing was written"}
		return nil, c.previousError(env, w.read, e, prior)
	case err != nil:
		return nil, err
	}
	return c.logStored(key, w, offset, prior)
}

// logCondPublish publishes w on the condition that the channel's newest
// message is still the one it reads first (prior, the one replaced), and
// reads again while another writer comes between. mismatch says w's
// position is not the channel's newest (prior is): nothing was stored.
func (c *conn) logCondPublish(ctx context.Context, key string, w logWrite) (offset uint64, prior store.Prior, mismatch bool, err error) {
	epoch := c.srv.journal.Epoch()
	// resentID is the Msg-Id of the last attempt when it was refused
	// after it was sent more than once: it may be stored after all.
	resentID := ""
	for {
		if resentID != "" {
			// Kept, should the attempt prove stored: the read below
			// reuses the connection's buffer.
			prior.Data = bytes.Clone(prior.Data)
		}
		last, lastID, p, err := c.logPrior(ctx, key)
		if err != nil && resentID != "" {
			// The refused attempt may be stored after all: unknown.
			return 0, prior, false, c.logError(fmt.Errorf("%w: %w", err, store.ErrFateUnknown))
		}
		if err != nil {
			return 0, prior, false, err
		}
		if resentID != "" && lastID == resentID {
			// The refused attempt is the channel's newest: stored, its
			// refusal that of a send after the first.
			if err := c.srv.journal.Await(ctx, last, lastID); err != nil {
				return 0, prior, false, c.logError(err)
			}
			return last, prior, false, nil
		}
		prior = p
		if w.expect != nil && !logMatches(*w.expect, prior, epoch, last) {
			return 0, prior, true, nil
		}
		id := nuid.Next()
		offset, err = c.srv.publishExpect(ctx, key, w, id, last)
		if errors.Is(err, store.ErrMismatch) {
			var resent bool
			offset, resent, err = c.srv.ownFirstSend(ctx, key, id, err)
			if resentID = ""; resent {
				resentID = id
			}
			if errors.Is(err, store.ErrMismatch) {
				continue // another writer came between the read and the write
			}
		}
		if err != nil {
			return 0, prior, false, c.logError(err)
		}
		return offset, prior, false, nil
	}
}

// logStored answers w, stored at offset after prior, and arms its
// switch.
func (c *conn) logStored(key string, w logWrite, offset uint64, prior store.Prior) (any, error) {
	pos := rtm.Position{Epoch: c.srv.journal.Epoch(), Offset: offset}
	c.srv.counters.messagesIn[c.codecIndex].Add(1)
	c.traffic.messagesIn.Add(1)
	if w.ttl != 0 {
		c.srv.ttl.arm(key, pos, w.ttl, w.ttlPayload)
	}
	return c.previousReply(pos.String(), w.read, prior)
}

// logPrior reads the channel's newest message from the log's leader:
// last is its offset (0: none) and lastID its Msg-Id, prior the newest
// readable one under the channel's rule (what a read answers), in the
// connection's buffer.
func (c *conn) logPrior(ctx context.Context, key string) (last uint64, lastID string, prior store.Prior, err error) {
	f, lastID, found, err := c.srv.journal.Latest(ctx, key, 0)
	if err != nil {
		c.srv.log.Warn("reading a channel's newest message from the log", "err", err)
		return 0, "", store.Prior{}, rtm.Errorf(rtm.CodeUnavailable, "the cluster's log cannot be read now, so nothing was written; try again")
	}
	prior = store.Prior{Data: c.prevBuf[:0]}
	if found && readable(c.srv.retention(key).Normalized(), c.srv.store.Now(), f.Time, 0) {
		prior = store.Prior{Found: true, Position: rtm.Position{Epoch: c.srv.journal.Epoch(), Offset: f.Offset},
			Data: append(c.prevBuf[:0], f.Data...)}
	}
	c.prevBuf = prior.Data[:0]
	if found {
		last = f.Offset
	}
	return last, lastID, prior, nil
}

// logMatches reports whether expect names the newest message of a
// channel whose newest readable message is prior and whose newest message
// in the log is at last: that message's position, or, with none
// readable, 0:0 or a position after last (what a read of nothing
// answers), as store's AppendIf matches.
func logMatches(expect rtm.Position, prior store.Prior, epoch, last uint64) bool {
	if prior.Found {
		return expect == prior.Position
	}
	return expect == (rtm.Position{}) || expect.Epoch == epoch && expect.Offset > last
}

// publishExpect publishes w through the journal if key's newest message
// is at last, and waits for the log.
func (s *Server) publishExpect(ctx context.Context, key string, w logWrite, id string, last uint64) (uint64, error) {
	return waitLog(ctx, func(done func(uint64, error)) {
		s.journal.PublishExpect(ctx, key, w.payload, id, w.origin, last, w.ttl, w.ttlPayload, done)
	})
}

// publishWithID publishes payload through the journal, with the Msg-Id
// id (none: "") and from origin, and waits for the log until ctx ends.
func (s *Server) publishWithID(ctx context.Context, key string, payload []byte, id, origin string) (uint64, error) {
	return waitLog(ctx, func(done func(uint64, error)) { s.journal.PublishFrom(key, payload, id, origin, done) })
}

// ownFirstSend tells whether a conditional publish refused (err, a
// store.ErrMismatch) after it was sent more than once was refused
// because its own first send was stored (a single JetStream node checks
// the condition before the Msg-Id): then it returns that offset, once
// the store holds it. Otherwise it returns err. resent says whether the
// publish was sent more than once (a cluster refuses it while its first
// send is being proposed, without saying where: the next read tells).
func (s *Server) ownFirstSend(ctx context.Context, key, id string, err error) (offset uint64, resent bool, _ error) {
	var r interface{ Resent() (uint64, bool) }
	if !errors.As(err, &r) {
		return 0, false, err
	}
	at, resent := r.Resent()
	if !resent || at == 0 {
		return 0, resent, err
	}
	_, got, found, gerr := s.journal.Latest(ctx, key, at)
	if gerr != nil {
		return 0, resent, gerr
	}
	if !found || got != id {
		return 0, resent, err
	}
	if werr := s.journal.Await(ctx, at, id); werr != nil {
		return 0, resent, werr
	}
	return at, resent, nil
}

// logError maps the error of a conditional publish to the client's, as
// ackFrame does a publish's.
func (c *conn) logError(err error) error { return c.srv.logRefusal(err, "conditional publish") }

// logPurge serves rtm/delete with purge on an edge with a journal: the
// journal marks the purge of the channel's messages up to its newest for
// every edge's store if no message came since, then drops them from the
// log (journal.Purge). If one came, it is dropped too on the next try:
// the previous message answered is the newest of those dropped. A
// channel the log holds nothing of needs no marker (one naming no
// message would say it was purged up to nothing): the edge waits until
// its store shows that, as another edge's purge may have just made it.
func (c *conn) logPurge(channel, read string) (any, error) {
	key := storeKey(c.app, channel)
	c.drainAcks()
	ctx, cancel := c.srv.requestContext(c.ctx)
	defer cancel()
	var dropped store.Prior
	for {
		last, _, p, err := c.logPrior(ctx, key)
		if err != nil {
			return nil, err
		}
		if last == 0 {
			if !dropped.Found {
				dropped = p // none: nothing to drop
			}
			if err := c.srv.awaitApplied(ctx); err != nil {
				return nil, c.logError(err)
			}
			break
		}
		// A copy: the next read reuses the connection's buffer.
		dropped = store.Prior{Found: p.Found, Position: p.Position, Data: bytes.Clone(p.Data)}
		_, err = waitLog(ctx, func(done func(uint64, error)) { c.srv.journal.Purge(ctx, key, last, nuid.Next(), done) })
		if errors.Is(err, store.ErrMismatch) {
			continue // a message came meanwhile
		}
		if err != nil {
			return nil, c.logError(err)
		}
		break
	}
	c.srv.ttl.disarm(key) // as an edge alone does (on other edges the log refuses the switch's message)
	if !wantsPrevious(read, true) {
		return &rtm.Empty{}, nil
	}
	return c.previousReply("", read, dropped)
}

// awaitApplied waits until this edge's store has applied every message
// the log had acknowledged when it was called (another edge's purge
// marker among them), or ctx ends.
func (s *Server) awaitApplied(ctx context.Context) error {
	last, err := s.journal.Acknowledged(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", errLog, err)
	}
	for pause := logCaughtUpPause; s.store.Applied() < last; pause = min(2*pause, logLagPause) {
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w: this edge has applied %d of %d: %w", errLog, s.store.Applied(), last, ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

package chanlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nuid"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// A write's condition (compare-and-set) and the previous message are
// checked by the log itself, in one step with the append: the log's
// leader is asked for the channel's newest message, the condition is
// checked against it, and the write is published expecting that very
// message to be the channel's newest still (the journal's
// PublishExpect). Stored, the message it replaced is exactly the one
// read; refused, another writer came between, and the newest is read
// again: a compare-and-set then finds the channel moved on (a mismatch,
// with the newer message), a plain read of the previous message tries
// again. The same as an edge alone does under its channel's writer lock,
// across every edge of a cluster.

// journalChannel appends to one channel through the journal.
type journalChannel struct {
	l   *Journaled
	j   Journal // key's partition's
	key string
}

// Channel returns a handle of key.
func (l *Journaled) Channel(key string) Channel { return journalChannel{l, l.jn(key), key} }

// Append hands msg to the journal, which answers once the log stored it
// and the replica holds it.
// A count of the app's channels in the log (admit) is part of the
// publish's one deadline, the log's publish timeout; a channel the
// replica holds needs none, and costs no context.
func (c journalChannel) Append(msg Message) (rtm.Position, *Pending, error) {
	ctx := context.Background()
	if c.l.counts(c.key, msg.Limit) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.l.j.PublishTimeout())
		defer cancel() // the publish reads only its deadline
		if err := c.l.admit(ctx, c.key, msg.Limit); err != nil {
			return rtm.Position{}, nil, err
		}
	}
	p := &Pending{}
	epoch := c.j.Epoch()
	c.j.PublishFrom(ctx, c.key, msg.Payload, msg.ID, msg.Origin, func(offset uint64, err error) {
		p.answer(rtm.Position{Epoch: epoch, Offset: offset}, err)
	})
	return rtm.Position{}, p, nil
}

// admit refuses, before the journal stores it, a message that would
// create a channel past its group's limit. The replica is fed everything
// the log stored (its AppendAt is never refused), so the check is made
// here: appends racing to new channels, on this edge or others, may take
// a group a few past its limit, never further. A channel the replica
// holds is admitted at once. Others are counted in the log, which holds
// the group's channels where the replica may not: an edge fed by
// interest holds those it follows, and a store bounded below the log
// (limits.store_bytes; a durable edge's store is a cache of its log)
// lets go of the oldest channels' messages. The log's count is taken at
// most once a second per app (Journal.AppChannels), not per message.
// The count is part of the request: it ends with ctx.
func (l *Journaled) admit(ctx context.Context, key string, limit int) error {
	if !l.counts(key, limit) {
		return nil
	}
	has, n, err := l.appChannels(ctx, key)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %w", store.ErrNotStored, err)
	case has || n < limit:
		return nil
	}
	return store.ErrChannelLimit
}

// counts reports whether admit counts the log's channels for key: a
// limit is set and the replica does not hold key's channel.
func (l *Journaled) counts(key string, limit int) bool {
	return limit > 0 && !l.st.Has(key)
}

// appChannels reports whether the log holds key's channel, and how many
// channels of key's group it holds: in every partition, since a group's
// channels are spread over them. Only key's own partition counts key as
// about to be made (AppChannels); the others count what they hold.
func (l *Journaled) appChannels(ctx context.Context, key string) (has bool, n int, err error) {
	own := l.jn(key)
	if has, n, err = own.AppChannels(ctx, key); err != nil {
		return false, 0, err
	}
	for _, j := range l.parts {
		if j == own {
			continue
		}
		c, err := j.CountChannels(ctx, key)
		if err != nil {
			return false, 0, err
		}
		n += c
	}
	return has, n, nil
}

// wait hands a done function to send and waits for its call, as
// Pending.Wait does.
func wait(ctx context.Context, send func(done func(uint64, error))) (uint64, error) {
	p := &Pending{}
	send(func(o uint64, err error) { p.answer(rtm.Position{Offset: o}, err) })
	pos, err := p.Wait(ctx)
	return pos.Offset, err
}

// AppendIf appends w once the log's leader shows its condition holds.
func (l *Journaled) AppendIf(ctx context.Context, key string, w Write, buf []byte) (rtm.Position, store.Prior, error) {
	if err := l.admit(ctx, key, w.Limit); err != nil {
		return rtm.Position{}, store.Prior{Data: buf[:0]}, err
	}
	if !w.Compare && !w.Previous {
		// ttl alone: a plain publish that arms a switch.
		offset, err := wait(ctx, func(done func(uint64, error)) {
			l.jn(key).PublishArming(ctx, key, w.Payload, w.Origin, w.TTL, w.TTLMessage, done)
		})
		return l.position(key, offset, err), store.Prior{Data: buf[:0]}, err
	}
	offset, prior, err := l.condPublish(ctx, key, w, buf)
	return l.position(key, offset, err), prior, err
}

// position is the position of offset, without an error.
func (l *Journaled) position(key string, offset uint64, err error) rtm.Position {
	if err != nil {
		return rtm.Position{}
	}
	return rtm.Position{Epoch: l.epoch(key), Offset: offset}
}

// condPublish publishes w on the condition that the channel's newest
// message is still the one it reads first (prior, the one replaced), and
// reads again while another writer comes between. A mismatch says w's
// condition does not hold (prior is the newest): nothing was stored.
func (l *Journaled) condPublish(ctx context.Context, key string, w Write, buf []byte) (offset uint64, prior store.Prior, err error) {
	// resentID is the Msg-Id of the last attempt when it was refused
	// after it was sent more than once: it may be stored after all.
	resentID := ""
	waited := false // for the leader to reach w's position
	prior.Data = buf[:0]
	for {
		if resentID != "" {
			// Kept, should the attempt prove stored: the read below
			// reuses the buffer.
			prior.Data = bytes.Clone(prior.Data)
		}
		last, lastID, p, err := l.prior(ctx, key, buf)
		if err != nil && resentID != "" {
			// The refused attempt may be stored after all: unknown.
			return 0, prior, fmt.Errorf("%w: %w", err, store.ErrFateUnknown)
		}
		if err != nil {
			return 0, prior, err
		}
		if resentID != "" && lastID == resentID {
			// The refused attempt is the channel's newest: stored, its
			// refusal that of a send after the first.
			if err := l.jn(key).Await(ctx, last, lastID); err != nil {
				return 0, prior, err
			}
			return last, prior, nil
		}
		prior, buf = p, p.Data[:0]
		if w.Compare && !matches(w.Expect, prior, l.epoch(key), last) {
			if !waited && l.j.Shared() && w.Expect.Epoch == l.epoch(key) && w.Expect.Offset > last {
				// The leader's newest is older than the position: it may
				// not have applied yet what an edge delivered (a leader
				// just elected, all it holds). Read again once it has.
				waited = true
				if l.leaderReached(ctx, key, w.Expect.Offset) == nil {
					continue
				}
			}
			return 0, prior, store.ErrMismatch
		}
		id := nuid.Next()
		offset, err = wait(ctx, func(done func(uint64, error)) {
			l.jn(key).PublishExpect(ctx, key, w.Payload, id, w.Origin, last, w.TTL, w.TTLMessage, done)
		})
		if errors.Is(err, store.ErrMismatch) {
			var resent bool
			offset, resent, err = l.ownFirstSend(ctx, key, id, err)
			if resentID = ""; resent {
				resentID = id
			}
			if errors.Is(err, store.ErrMismatch) {
				continue // another writer came between the read and the write
			}
		}
		return offset, prior, err
	}
}

// leaderReached waits until the leader of key's partition has applied
// it up to offset, or ctx ends (its error).
func (l *Journaled) leaderReached(ctx context.Context, key string, offset uint64) error {
	for pause := logCaughtUpPause; ; pause = min(2*pause, futurePause) {
		if _, last, err := l.jn(key).Bounds(ctx); err == nil && last >= offset {
			return nil
		}
		if err := pauseCtx(ctx, pause); err != nil {
			return err
		}
	}
}

// prior reads the channel's newest message from the log's leader: last
// is its offset (0: none) and lastID its Msg-Id, prior the newest
// readable one under the channel's rule (what a read answers), in buf.
func (l *Journaled) prior(ctx context.Context, key string, buf []byte) (last uint64, lastID string, prior store.Prior, err error) {
	f, lastID, found, err := l.jn(key).Latest(ctx, key, 0)
	if err != nil {
		l.log.Warn("reading a channel's newest message from the log", "err", err)
		return 0, "", store.Prior{Data: buf[:0]}, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	prior = store.Prior{Data: buf[:0]}
	if found && readable(l.retention(key).Normalized(), l.st.Now(), f.Time, 0) {
		prior = store.Prior{Found: true, Position: rtm.Position{Epoch: l.epoch(key), Offset: f.Offset},
			Data: append(buf[:0], f.Data...)}
	}
	if found {
		last = f.Offset
	}
	return last, lastID, prior, nil
}

// matches reports whether expect names the newest message of a channel
// whose newest readable message is prior and whose newest message in the
// log is at last: that message's position, or, with none readable, 0:0
// or a position after last (what a read of nothing answers), as the
// store's AppendIf matches.
func matches(expect rtm.Position, prior store.Prior, epoch, last uint64) bool {
	if prior.Found {
		return expect == prior.Position
	}
	return expect == (rtm.Position{}) || expect.Epoch == epoch && expect.Offset > last
}

// ownFirstSend tells whether a conditional publish refused (err, a
// store.ErrMismatch) after it was sent more than once was refused
// because its own first send was stored (a single JetStream node checks
// the condition before the Msg-Id): then it returns that offset, once
// the store holds it. Otherwise it returns err. resent says whether the
// publish was sent more than once (a cluster refuses it while its first
// send is being proposed, without saying where: the next read tells).
func (l *Journaled) ownFirstSend(ctx context.Context, key, id string, err error) (offset uint64, resent bool, _ error) {
	var r interface{ Resent() (uint64, bool) }
	if !errors.As(err, &r) {
		return 0, false, err
	}
	at, resent := r.Resent()
	if !resent || at == 0 {
		return 0, resent, err
	}
	_, got, found, gerr := l.jn(key).Latest(ctx, key, at)
	if gerr != nil {
		return 0, resent, gerr
	}
	if !found || got != id {
		return 0, resent, err
	}
	if werr := l.jn(key).Await(ctx, at, id); werr != nil {
		return 0, resent, werr
	}
	return at, resent, nil
}

// Fire publishes a switch's message expecting the arming one to be the
// channel's newest still.
func (l *Journaled) Fire(ctx context.Context, key string, at rtm.Position, payload []byte) error {
	_, err := wait(ctx, func(done func(uint64, error)) {
		l.jn(key).PublishExpect(ctx, key, payload, nuid.Next(), "", at.Offset, 0, nil, done)
	})
	return err
}

// Purge marks the purge of the channel's messages up to its newest for
// every edge's store if no message came since, then drops them from the
// log (the journal's Purge). If one came, it is dropped too on the next
// try: the previous message answered is the newest of those dropped. A
// channel the log holds nothing of needs no marker (one naming no
// message would say it was purged up to nothing): the edge waits until
// its store shows that, as another edge's purge may have just made it.
func (l *Journaled) Purge(ctx context.Context, key string, buf []byte) (store.Prior, error) {
	var dropped store.Prior
	for {
		last, _, p, err := l.prior(ctx, key, buf)
		if err != nil {
			return store.Prior{Data: buf[:0]}, err
		}
		if last == 0 {
			if !dropped.Found {
				dropped = p // none: nothing to drop
			}
			if !l.j.Interest() {
				return dropped, l.awaitApplied(ctx, key)
			}
			release, err := l.caughtUp(ctx, key)
			if err == nil {
				release()
			}
			return dropped, err
		}
		// A copy: the next read reuses the buffer.
		dropped = store.Prior{Found: p.Found, Position: p.Position, Data: bytes.Clone(p.Data)}
		_, err = wait(ctx, func(done func(uint64, error)) { l.jn(key).Purge(ctx, key, last, nuid.Next(), done) })
		if errors.Is(err, store.ErrMismatch) {
			continue // a message came meanwhile
		}
		return dropped, err
	}
}

package store

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/shared/rtm"
)

// ErrMismatch refuses a conditional append (AppendIf) whose expected
// position is not the channel's newest message's; nothing was stored.
var ErrMismatch = errors.New("store: position is not the channel's newest")

// Prior is a channel's newest readable message before an AppendIf or a
// Purge. Found is false when there was none; Position is then zero.
type Prior struct {
	Found    bool
	Position rtm.Position
	Data     []byte
}

// prior reads the channel's newest readable message into buf. mu.
func (ch *channel) prior(buf []byte) Prior {
	f, found, _ := ch.q.Load().newest()
	if !found {
		return Prior{Data: buf[:0]}
	}
	// A copy: the caller uses it after mu is released, and an evicted
	// block's bytes are no longer the store's to lend.
	return Prior{Found: true, Position: rtm.Position{Epoch: ch.epoch, Offset: f.Offset}, Data: append(buf[:0], f.Data...)}
}

// matches reports whether expect names the newest message of a channel
// whose newest readable message is p. mu.
func (ch *channel) matches(expect rtm.Position, p Prior) bool {
	if p.Found {
		return expect == p.Position
	}
	return expect == (rtm.Position{}) || expect == rtm.Position{Epoch: ch.epoch, Offset: ch.last + 1}
}

// AppendIf is AppendWithin with a condition checked, and the previous
// message read, under the channel's writer lock, where no other append
// can come between the check and the write: compare-and-set, and "the
// message before mine" that is exactly that.
//
// expect, when not nil, stores the message only if it is the position of
// the channel's newest readable message; a channel without one matches
// the zero position (0:0, what a read of nothing answers) and its next
// position. Otherwise nothing is stored, the error is ErrMismatch and
// prior says what the channel holds instead; a mismatch on a channel the
// store does not hold creates nothing. The previous message's data is
// appended to buf[:0], so a caller reusing it does not allocate. (Two
// parameters, not a struct of them: prior aliases buf, and a struct would
// move the caller's expected position to the heap with it.)
func (h *Channel) AppendIf(data []byte, maxChannels int, expect *rtm.Position, buf []byte) (pos rtm.Position, prior Prior, err error) {
	return h.AppendIfFrom("", data, maxChannels, expect, buf)
}

// AppendIfFrom is AppendIf of a message from origin (see AppendFrom).
func (h *Channel) AppendIfFrom(origin string, data []byte, maxChannels int, expect *rtm.Position, buf []byte) (pos rtm.Position, prior Prior, err error) {
	if err := h.s.admit(h.name, origin, data); err != nil {
		return rtm.Position{}, Prior{}, err
	}
	if expect != nil && *expect != (rtm.Position{}) && h.s.lookup(h.name) == nil {
		// Nothing there, so no position but 0:0 is its newest.
		return rtm.Position{}, Prior{Data: buf[:0]}, fmt.Errorf("store: append to %q at %v: %w", h.name, *expect, ErrMismatch)
	}
	t := h.s.stampNow()
	for {
		ch := h.ch.Load()
		if ch != nil {
			if pos, prior, ok, err := ch.commitIf(t, origin, data, expect, buf); ok {
				return pos, prior, err
			}
		}
		nc, err := h.s.obtainWithin(h.name, maxChannels)
		if err != nil {
			return rtm.Position{}, Prior{}, err
		}
		h.ch.CompareAndSwap(ch, nc)
	}
}

// commitIf is commit (at the next offset) after checking expect under
// mu.
func (ch *channel) commitIf(t int64, origin string, data []byte, expect *rtm.Position, buf []byte) (pos rtm.Position, p Prior, ok bool, err error) {
	ch.mu.Lock()
	if ch.dead {
		ch.mu.Unlock()
		return rtm.Position{}, Prior{}, false, nil
	}
	p = ch.prior(buf)
	if expect != nil && !ch.matches(*expect, p) {
		ch.mu.Unlock()
		return rtm.Position{}, p, true, fmt.Errorf("store: append to %q at %v: %w", ch.name, *expect, ErrMismatch)
	}
	offset := ch.last + 1
	t = max(t, ch.lastTime)
	nb, notify := ch.write(offset, t, origin, data)
	pos = rtm.Position{Epoch: ch.epoch, Offset: offset}
	ch.mu.Unlock()
	if notify {
		ch.s.nt.queue(ch)
	}
	if s := ch.s; nb != nil && s.counters.memory.Load() > s.opts.StoreBytes {
		s.evictStore(nb)
	}
	return pos, p, true, nil
}

// Purge drops every message of channel (rtm/delete with purge): positions
// before now are expired, a cursor that had yet to read some of them is
// out of sync, and one at the end reads on with the next message, at the
// next offset of the same epoch. A channel left without cursors is
// forgotten, as when the store limit evicts its last block. It returns
// the newest message before the purge, read into buf.
func (s *Store) Purge(channel string, buf []byte) (Prior, error) {
	return s.PurgeThrough(channel, 0, buf)
}

// PurgeThrough is Purge in a replica (Options.Epoch set) applying a purge
// of the shared log that dropped the channel's messages up to offset
// through. The replica may not hold them all: its feed lags the log, and
// the log dropped them before the feed read them. Positions up to
// through are expired all the same, and a cursor at or before through is
// out of sync though the store never held what it missed (it missed the
// message at through at least): else its subscriber would skip them
// silently. A through the channel holds, or 0, is Purge.
func (s *Store) PurgeThrough(channel string, through uint64, buf []byte) (Prior, error) {
	if s.closed.Load() {
		return Prior{}, ErrClosed
	}
	ch := s.lookup(channel)
	if ch == nil {
		return Prior{Data: buf[:0]}, nil // nothing to drop, nothing to create
	}
	ch.mu.Lock()
	if ch.dead {
		ch.mu.Unlock()
		return Prior{Data: buf[:0]}, nil // forgotten meanwhile: nothing held
	}
	p := ch.prior(buf)
	q := ch.q.Load()
	unheld := through > ch.last
	if unheld {
		// Before the trim: the anchor replacing the tail, and the next
		// block, start after through, and so does the head.
		ch.last = through
	}
	// Counted as evicted: dropped before their time, by request.
	ch.trim(q, len(q.blocks), len(q.blocks), &s.counters.evicted)
	notify := unheld && ch.dropUnheld()
	ch.protected = false
	ch.drained = true // see nextDeadline: forgotten once unused
	drained := ch.empty()
	ch.schedule()
	ch.mu.Unlock()
	if notify {
		s.nt.queue(ch)
	}
	if drained {
		s.forget(ch, s.clockNow())
	}
	return p, nil
}

// dropUnheld follows a purge past the channel's messages, ch.last raised
// to its end: the snapshot's next offset moves past it, and an anchor
// starting past it ends the queue, so that a cursor reaching it with its
// position before it is out of sync (Cursor.Read). The cursors waiting at
// the end of the queue lost messages no append woke them for: it
// reports whether the caller must queue the channel on the notifier, as
// write does. mu.
func (ch *channel) dropUnheld() (notify bool) {
	ch.q.Store(&queue{next: ch.last + 1})
	if ch.tail.from <= ch.last {
		// The tail was an anchor already (trim replaced a block with one
		// starting past ch.last): link one that does.
		a := newAnchor(ch)
		ch.tail.next.Store(a)
		ch.tail = a
	}
	if !ch.wakePending.Load() && ch.waits.n.Load() != 0 {
		ch.wakePending.Store(true)
		return true
	}
	return false
}

package store

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Channel is a handle on a channel for repeated appends: it keeps the
// channel instead of looking it up by name on every append. It is safe for
// concurrent use. It does not keep the channel alive: if the channel is
// forgotten (empty, unused, past its TTL), the next append through the
// handle goes to the channel's new incarnation, with a new epoch, exactly
// as Store.Append would.
type Channel struct {
	s    *Store // immutable
	name string // immutable
	// ch is the incarnation appends go to, nil until the first. Loaded
	// without a lock by every append; replaced by compare-and-swap by an
	// appender that found it forgotten (commit checks under the channel's
	// lock, so a stale pointer costs a retry, never a lost message).
	ch atomic.Pointer[channel]
}

// Channel returns a handle on the channel named name. The channel itself
// is created by the handle's first append, as by Store.Append.
func (s *Store) Channel(name string) *Channel {
	return &Channel{s: s, name: strings.Clone(name)}
}

// Name returns the channel's name.
func (h *Channel) Name() string { return h.name }

// Append is Store.Append on the handle's channel.
func (h *Channel) Append(data []byte) (rtm.Position, error) {
	if err := h.s.admit(h.name, "", data); err != nil {
		return rtm.Position{}, err
	}
	return h.append(0, h.s.stampNow(), false, "", data, 0)
}

// AppendWithin is Append, except that an append that would create the
// channel (it is not live: never used, or forgotten) when its group
// (Options.Group) already has maxChannels live channels stores nothing
// and returns ErrChannelLimit. Appends to a live channel are never
// refused, and cost what Append does. maxChannels <= 0 means no limit.
func (h *Channel) AppendWithin(data []byte, maxChannels int) (rtm.Position, error) {
	if err := h.s.admit(h.name, "", data); err != nil {
		return rtm.Position{}, err
	}
	return h.append(0, h.s.stampNow(), false, "", data, maxChannels)
}

// AppendFrom is AppendWithin of a message from origin: an opaque tag of
// at most MaxOriginBytes (longer: ErrOriginTooLong) that the message's
// Frame carries as Origin, "" for none. The edge puts the id of a
// connection there that is not to receive the message (exclude_self): a
// reader compares it and skips the message, while its position stays
// the one the message holds. A message without an origin costs no byte
// more than before; one with an origin costs its length plus one.
func (h *Channel) AppendFrom(origin string, data []byte, maxChannels int) (rtm.Position, error) {
	if err := h.s.admit(h.name, origin, data); err != nil {
		return rtm.Position{}, err
	}
	return h.append(0, h.s.stampNow(), false, origin, data, maxChannels)
}

// AppendAt is Store.AppendAt on the handle's channel.
func (h *Channel) AppendAt(offset uint64, t time.Time, data []byte) (rtm.Position, error) {
	return h.AppendAtFrom(offset, t, "", data)
}

// AppendAtFrom is AppendAt of a message from origin (see AppendFrom): a
// replica applying a log whose messages carry their origin.
func (h *Channel) AppendAtFrom(offset uint64, t time.Time, origin string, data []byte) (rtm.Position, error) {
	if offset == 0 {
		return rtm.Position{}, fmt.Errorf("store: append to %q at offset 0: %w", h.name, ErrOffsetOrder)
	}
	if err := h.s.admit(h.name, origin, data); err != nil {
		return rtm.Position{}, err
	}
	return h.append(offset, t.UnixNano(), true, origin, data, 0)
}

// append commits to the handle's incarnation, obtaining a fresh one first
// if there is none yet or it was forgotten (within maxChannels, see
// AppendWithin).
func (h *Channel) append(offset uint64, t int64, at bool, origin string, data []byte, maxChannels int) (rtm.Position, error) {
	for {
		ch := h.ch.Load()
		if ch != nil {
			if pos, ok, err := ch.commit(offset, t, at, origin, data); ok {
				return pos, err
			}
		}
		nc, err := h.s.obtainWithin(h.name, maxChannels)
		if err != nil {
			return rtm.Position{}, err
		}
		// If another appender replaced ch first, the swap fails and the
		// next round uses its replacement.
		h.ch.CompareAndSwap(ch, nc)
	}
}

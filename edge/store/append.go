package store

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Append stores data as the next message of channel, creating the channel
// on first use, and returns its position. The store copies data. Once
// Append returns, the message is readable and the cursors waiting on the
// channel are being woken by the store's notifier goroutine (Append does
// not call their Wakers itself). A publisher appending to a channel
// repeatedly saves the channel lookup with a Channel handle.
func (s *Store) Append(channel string, data []byte) (rtm.Position, error) {
	return s.append(channel, 0, 0, false, data)
}

// AppendAt stores data at a given offset and time, for a cluster that
// numbers messages itself. The offset must be above the channel's last one
// (ErrOffsetOrder otherwise); it may skip. A time before the channel's
// newest message is raised to it, so times never decrease in a channel.
func (s *Store) AppendAt(channel string, offset uint64, t time.Time, data []byte) (rtm.Position, error) {
	if offset == 0 {
		return rtm.Position{}, fmt.Errorf("store: append to %q at offset 0: %w", channel, ErrOffsetOrder)
	}
	return s.append(channel, offset, t.UnixNano(), true, data)
}

// append is Append and AppendAt (a message with no origin; Channel's
// AppendFrom and AppendAtFrom keep one): with at, offset and t are given.
func (s *Store) append(name string, offset uint64, t int64, at bool, data []byte) (rtm.Position, error) {
	if err := s.admit(name, "", data); err != nil {
		return rtm.Position{}, err
	}
	if !at {
		t = s.stampNow()
	}
	for {
		if pos, ok, err := s.obtain(name).commit(offset, t, at, "", data); ok {
			return pos, err
		}
		// Forgotten meanwhile: obtain creates a fresh one.
	}
}

// admit checks that the store is open and that data from origin can be
// stored at all.
func (s *Store) admit(name, origin string, data []byte) error {
	if s.closed.Load() {
		return ErrClosed
	}
	n := len(data)
	if origin != "" {
		if len(origin) > MaxOriginBytes {
			return fmt.Errorf("store: append to %q: an origin of %d bytes: %w", name, len(origin), ErrOriginTooLong)
		}
		n += 1 + len(origin)
	}
	if fs := int64(n) + frameOverhead; n > maxBodyLen || fs > s.opts.ChannelBytes || fs > s.opts.StoreBytes {
		return fmt.Errorf("store: append %d bytes to %q: %w", len(data), name, ErrTooLarge)
	}
	return nil
}

// commit appends one message to ch (at: at offset, else at the next one)
// and evicts past StoreBytes. ok is false, and nothing is written, if ch
// was forgotten: the caller retries with the channel's new incarnation, so
// an acknowledged append never lands in a forgotten channel.
func (ch *channel) commit(offset uint64, t int64, at bool, origin string, data []byte) (pos rtm.Position, ok bool, err error) {
	ch.mu.Lock()
	if ch.dead {
		ch.mu.Unlock()
		return rtm.Position{}, false, nil
	}
	if !at {
		offset = ch.last + 1
	} else if offset <= ch.last {
		last := ch.last
		ch.mu.Unlock()
		return rtm.Position{}, true, fmt.Errorf("store: append to %q at offset %d after %d: %w",
			ch.name, offset, last, ErrOffsetOrder)
	}
	t = max(t, ch.lastTime)
	nb, notify := ch.write(offset, t, origin, data)
	pos = rtm.Position{Epoch: ch.epoch, Offset: offset}
	ch.mu.Unlock()
	if notify {
		ch.s.nt.queue(ch) // outside mu: other appenders need not wait for it
	}
	if s := ch.s; nb != nil && s.counters.memory.Load() > s.opts.StoreBytes {
		s.evictStore(nb)
	}
	return pos, true, nil
}

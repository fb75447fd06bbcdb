package store

// Follow readies channel in a replica fed by interest (an edge that
// receives a channel's messages only while it has a subscriber of it):
// the feed starts after offset after, the channel's newest in the log
// when the edge began to follow it, and appends from there with
// AppendAt. A channel the store holds ending before after, left over
// from an earlier follow whose feed stopped, may miss what came between:
// its messages go, and its positions up to after read as expired (the
// caller reads them from the log). A channel ending at or past after
// stays as it is.
//
// The channel stays in the store until Unfollow, though it holds nothing:
// a channel made again would not know where its feed had got to.
//
// Unlike SetApplied, which moves every channel of a replica fed in the
// log's order, Follow moves one: the other channels' feeds are their own.
func (s *Store) Follow(channel string, after uint64) error {
	if s.closed.Load() {
		return ErrClosed
	}
	for {
		ch := s.obtain(channel)
		ch.mu.Lock()
		if ch.dead {
			ch.mu.Unlock()
			continue // forgotten meanwhile: obtain a new one
		}
		ch.followed = true
		if ch.last >= after {
			ch.mu.Unlock()
			return nil
		}
		ch.last = after
		ch.base = max(ch.base, after)
		q := ch.q.Load()
		ch.trim(q, len(q.blocks), len(q.blocks), &s.counters.evicted)
		notify := ch.dropUnheld()
		ch.mu.Unlock()
		if notify {
			s.nt.queue(ch)
		}
		return nil
	}
}

// Unfollow drops channel from a replica fed by interest whose feed of it
// stopped (see Follow): what it holds would go stale. Its cursors, if any
// are left, read on as after a purge (out of sync).
func (s *Store) Unfollow(channel string) {
	ch := s.lookup(channel)
	if ch == nil {
		return
	}
	ch.mu.Lock()
	last := ch.last
	ch.followed = false
	ch.mu.Unlock()
	if _, err := s.PurgeThrough(channel, last, nil); err != nil {
		return // closed: nothing to drop
	}
}

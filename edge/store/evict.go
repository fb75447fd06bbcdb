package store

import "sync"

// fifo lists every live block of the store in creation order, so the
// store-wide limit evicts the globally oldest blocks first. A channel's
// blocks enter in its own order, so the first live block of any channel in
// the list is that channel's oldest.
type fifo struct {
	mu         sync.Mutex // guards head, tail and the blocks' fprev/fnext; a leaf lock
	head, tail *block
}

// push appends b (newest). Called under b.ch.mu.
func (f *fifo) push(b *block) {
	f.mu.Lock()
	b.fprev, b.fnext = f.tail, nil
	if f.tail != nil {
		f.tail.fnext = b
	} else {
		f.head = b
	}
	f.tail = b
	f.mu.Unlock()
}

// remove unlinks deleted blocks. Called under their channel's mu.
func (f *fifo) remove(bs []*block) {
	f.mu.Lock()
	for _, b := range bs {
		if b.fprev != nil {
			b.fprev.fnext = b.fnext
		} else {
			f.head = b.fnext
		}
		if b.fnext != nil {
			b.fnext.fprev = b.fprev
		} else {
			f.tail = b.fprev
		}
		b.fprev, b.fnext = nil, nil // let the GC free it
	}
	f.mu.Unlock()
}

// oldest returns the store's oldest live block, or nil.
func (f *fifo) oldest() *block {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.head
}

// evictStore deletes the store's oldest blocks until it is within
// StoreBytes, never keep (the block the calling append just opened). It
// runs outside any channel lock: it takes each victim's channel lock in
// turn, so two appenders evicting at once cannot deadlock. A victim left
// without blocks or cursors is forgotten at once, so that its structure
// is freed (and uncounted) too.
func (s *Store) evictStore(keep *block) {
	for s.counters.memory.Load() > s.opts.StoreBytes {
		b := s.fifo.oldest()
		if b == nil || b == keep {
			return
		}
		ch := b.ch
		ch.mu.Lock()
		q := ch.q.Load()
		drained := false
		switch {
		case b.deleted.Load():
			// Deleted meanwhile: look again.
		case q.blocks[0] != b:
			ch.mu.Unlock()
			return // cannot happen (see fifo); never spin on it
		default:
			ch.trim(q, 1, max(q.head, 1), &s.counters.evicted)
			ch.protected = false // see link
			if len(q.blocks) == 1 {
				ch.drained = true // see nextDeadline
				drained = ch.empty()
			}
			ch.schedule()
		}
		ch.mu.Unlock()
		if drained {
			s.forget(ch, s.clockNow())
		}
	}
}

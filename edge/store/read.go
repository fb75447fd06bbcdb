package store

import (
	"fmt"
	"sort"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Start says where a new Cursor begins.
type Start struct {
	// Position starts the cursor at this position, inclusive: at the first
	// message whose offset is >= it. ErrExpired if it is before the head
	// or of another epoch; ErrFuture if it is past the next offset, except
	// in a replica (Options.Epoch set), where it waits for it.
	Position *rtm.Position
	// HistoryCount, when Position is nil, starts at the oldest of the last
	// HistoryCount readable messages...
	HistoryCount int
	// ...and HistoryAge at the oldest readable message younger than it;
	// with both, the older start of the two. With neither (and no
	// Position) the cursor starts at the next message appended.
	HistoryAge time.Duration
}

// Read returns one message of channel without subscribing. With pos nil it
// is the newest readable message; otherwise the message at pos or the first
// after it. found is false when there is none (an unknown channel, or pos
// at or past the next offset). ErrExpired when pos is before the head or of
// another epoch. Read takes no lock.
func (s *Store) Read(channel string, pos *rtm.Position) (f Frame, found bool, err error) {
	ch := s.lookup(channel)
	if ch == nil {
		if pos != nil {
			return Frame{}, false, ErrExpired
		}
		return Frame{}, false, nil
	}
	q := ch.q.Load()
	if pos == nil {
		return q.newest()
	}
	if pos.Epoch != ch.epoch || pos.Offset < q.headOffset() {
		return Frame{}, false, ErrExpired
	}
	f, found = q.frameAt(pos.Offset)
	return f, found, nil
}

// frameAt returns the first message whose offset is >= offset, which is
// not before the head, if there is one. Blocks linked after the snapshot
// was taken are reached through next; among them may be an empty anchor
// (the tail after its predecessor was deleted), which holds no frame.
func (q *queue) frameAt(offset uint64) (Frame, bool) {
	if q.headBlock() == nil {
		return Frame{}, false
	}
	for b := q.blocks[q.find(offset)]; b != nil; b = b.next.Load() {
		end := b.end()
		if end == 0 {
			continue // an anchor
		}
		if o, _ := b.offsetAt(b.lastStart(end)); o < offset {
			continue // not in this block: skip the scan
		}
		return b.frame(b.seek(0, end, offset)), true
	}
	return Frame{}, false
}

// newest returns the newest message if it is readable: that of the last
// block holding one, following the blocks linked after the snapshot but
// not stopping at an anchor among them.
func (q *queue) newest() (Frame, bool, error) {
	if q.headBlock() == nil {
		return Frame{}, false, nil
	}
	b := q.blocks[len(q.blocks)-1]
	for n := b.next.Load(); n != nil; n = n.next.Load() {
		if n.end() > 0 {
			b = n
		}
	}
	return b.frame(b.lastStart(b.end())), true, nil
}

// Subscribe opens a cursor on channel name at start (see Start), creating the
// channel if missing unless start has a Position. Close the cursor when
// done: an open cursor keeps its channel, and the blocks after its read
// point, in memory. A channel the cursor created, or any channel that never
// held a message or whose messages the store limit evicted, is forgotten
// when its last cursor closes.
func (s *Store) Subscribe(name string, start Start) (*Cursor, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	for {
		var ch *channel
		if start.Position != nil {
			if ch = s.lookup(name); ch == nil {
				return nil, fmt.Errorf("store: subscribe to %q at %v: %w", name, *start.Position, ErrExpired)
			}
		} else {
			ch = s.obtain(name)
		}
		ch.mu.Lock()
		if ch.dead {
			ch.mu.Unlock()
			continue
		}
		c, err := ch.open(start)
		ch.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("store: subscribe to %q at %v: %w", name, *start.Position, err)
		}
		return c, nil
	}
}

// open returns a cursor at start. mu.
func (ch *channel) open(start Start) (*Cursor, error) {
	q := ch.q.Load()
	c := &Cursor{ch: ch}
	switch {
	case start.Position != nil:
		p := *start.Position
		if p.Epoch != ch.epoch || p.Offset < q.headOffset() {
			return nil, ErrExpired
		}
		if !ch.s.replica() && p.Offset > ch.last+1 {
			// A replica's offsets number a shared log it may lag behind:
			// its caller tells a future position from one not applied yet.
			return nil, ErrFuture
		}
		c.at(q, p.Offset)
	case start.HistoryCount > 0 || start.HistoryAge > 0:
		c.at(q, ch.historyStart(q, start))
	default:
		c.at(q, ch.last+1)
	}
	ch.cursors++
	return c, nil
}

// at places c before the first message whose offset is >= offset, which
// must not be before the head. mu.
func (c *Cursor) at(q *queue, offset uint64) {
	ch := c.ch
	c.next = offset
	if offset > ch.last || q.headBlock() == nil {
		t := ch.tail
		c.blk, c.off = t, t.end()
		return
	}
	i := q.find(offset)
	b := q.blocks[i]
	end := b.end()
	c.blk = b
	if c.off = b.seek(0, end, offset); c.off == end && i+1 < len(q.blocks) {
		c.blk, c.off = q.blocks[i+1], 0
	}
}

// historyStart returns the offset a history subscription starts at, or
// the next offset when no readable message qualifies. mu.
func (ch *channel) historyStart(q *queue, start Start) uint64 {
	from := ch.last + 1
	live := q.blocks[q.head:]
	if n := start.HistoryCount; n > 0 && len(live) > 0 {
		from = live[0].first
		for i := len(live) - 1; i >= 0; i-- {
			b := live[i]
			if b.count >= n {
				o, _ := b.offsetAt(b.nth(b.count - n))
				from = o
				break
			}
			n -= b.count
		}
	}
	if start.HistoryAge > 0 {
		cut := ch.s.clockNow() - int64(start.HistoryAge)
		i := sort.Search(len(live), func(i int) bool { return live[i].time >= cut })
		if i < len(live) {
			b := live[i]
			o, _ := b.offsetAt(b.seekTime(b.end(), cut))
			from = min(from, o)
		}
	}
	return from
}

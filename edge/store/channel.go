package store

import (
	"sort"
	"sync"
	"sync/atomic"
)

// channel is one channel's block queue. Its fields are laid out in cache
// lines by who writes them: the wait list (readers arming), the immutable
// fields, the writer's fields; the struct is 256 bytes so that the
// allocator aligns it to lines. Readers arming do not then invalidate the
// line of the fields every append writes.
type channel struct {
	waits waitList // cursors waiting for the next commit; first, 48 bytes
	_     [16]byte // to the end of the wait list's line

	name  string    // immutable
	epoch uint64    // immutable: unique per incarnation of the channel
	ret   Retention // immutable, normalized
	s     *Store    // immutable

	// mu is the writer lock: it serializes appends, and guards every field
	// below marked "mu" and the mu-guarded fields of this channel's blocks.
	mu sync.Mutex
	// q is the current snapshot of the queue. Replaced under mu (new block,
	// head moved, blocks deleted); loaded by readers without a lock.
	q atomic.Pointer[queue]

	tail      *block // mu: the block being written (or an empty anchor)
	last      uint64 // mu: offset of the newest message
	lastTime  int64  // mu: time of the newest message
	touched   int64  // mu: creation or newest-message time; dates forgetting
	bytes     int64  // mu: capacity of the live blocks
	nextSize  int    // mu: capacity of the next block opened
	cursors   int    // mu: open cursors; a channel with some is never forgotten
	appends   uint64 // mu: messages appended
	dead      bool   // mu: forgotten; users retry with a fresh channel
	protected bool   // mu: the head is kept only by history retention
	followed  bool   // mu: a feed by interest appends to it (Follow); never forgotten then
	// drained says the store limit evicted the channel's last block: its
	// readers lost its messages anyway, so once no cursor is open it is
	// forgotten at once (a flood of publishes to distinct channels leaves
	// nothing behind), not a TTL after its newest message. A channel that
	// subscribers alone made is not drained: it stays TTL + grace after
	// its last cursor closed (Cursor.Close dates it), so that a subscriber
	// whose connection dropped resumes at its position in the same epoch
	// rather than at expired_position; such channels are counted in
	// StoreBytes and bounded by the apps' max_channels. mu.
	drained bool
	// wakePending says the channel is queued on the store's notifier (or
	// being served), so an append finding cursors armed has nothing more
	// to do. Set by the writer under mu; cleared by the wake round before
	// it takes the armed cursors. Beside the fields every append writes,
	// not in the wait list's line, which arming readers write.
	wakePending atomic.Bool

	sched heapSlot // guarded by sweeper.mu

	// delivered is the highest offset some subscriber has been sent, for
	// measuring first-delivery latency. Raised by the subscribers' writers
	// (Cursor.MarkDelivered); last, away from the fields readers load.
	delivered atomic.Uint64
	// group counts the live channels of the channel's group; immutable,
	// lowered when the channel is forgotten.
	group *atomic.Int64
	// base is the store's applied offset when the channel was created,
	// or where Follow started it: a replica holds the channel's messages
	// after it, not those before (MovedOn). mu; here, where the 256 bytes
	// had room.
	base uint64
}

// queue is an immutable snapshot of a channel's live blocks.
type queue struct {
	blocks []*block // live (not deleted) blocks, oldest first
	head   int      // index of the first block not old; len(blocks) if none
	next   uint64   // last offset + 1 when published; the head when head == len(blocks)
}

// headOffset is the oldest offset new reads may ask for. When every block
// is old (or there is none), the next append opens a block and publishes a
// new snapshot, so next is exact.
func (q *queue) headOffset() uint64 {
	if q.head < len(q.blocks) {
		return q.blocks[q.head].from
	}
	return q.next
}

// headBlock returns the head block, or nil.
func (q *queue) headBlock() *block {
	if q.head < len(q.blocks) {
		return q.blocks[q.head]
	}
	return nil
}

// find returns the index (>= head) of the block holding offset, which must
// be >= headOffset(): the last block whose first offset is <= offset.
func (q *queue) find(offset uint64) int {
	live := q.blocks[q.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i].first > offset })
	return q.head + max(i-1, 0)
}

// newChannel returns an empty channel. Its tail is an anchor: an empty
// block, marked deleted so nothing is written into it, that cursors of an
// empty channel sit on until the first block is linked after it.
func (s *Store) newChannel(name string) *channel {
	now := s.stampNow()
	epoch, part := s.newEpoch(name)
	ch := &channel{
		name:     name,
		epoch:    epoch,
		ret:      s.opts.retention(name),
		s:        s,
		touched:  now,
		nextSize: s.opts.FirstBlockBytes,
		sched:    heapSlot{idx: -1},
	}
	// A replica (Options.Epoch set) holds every message appended since
	// the channel was created, not those before: its history starts
	// after the last offset the store had applied then.
	ch.last = s.Applied(part)
	ch.base = ch.last
	ch.tail = newAnchor(ch)
	ch.q.Store(&queue{next: ch.last + 1})
	ch.mu.Lock()
	ch.schedule()
	ch.mu.Unlock()
	return ch
}

// newAnchor returns an empty block after the channel's last message,
// marked deleted so that nothing is written into it: the tail of a
// channel without blocks, which cursors wait on. mu (or a new channel).
func newAnchor(ch *channel) *block {
	a := newBlock(ch, 0, ch.last+1, ch.last+1)
	a.deleted.Store(true)
	return a
}

// empty reports whether the channel holds no blocks and no cursors. mu.
func (ch *channel) empty() bool {
	return len(ch.q.Load().blocks) == 0 && ch.cursors == 0 && !ch.followed
}

// write appends one frame; the caller holds mu and has checked the offset.
// It returns the block it opened, if any, and whether the caller must
// queue the channel on the notifier (after unlocking mu).
func (ch *channel) write(offset uint64, t int64, origin string, data []byte) (nb *block, notify bool) {
	fs := bodyLen(origin, data) + frameOverhead
	b := ch.tail
	at := b.end()
	if b.old || b.deleted.Load() || len(b.buf)-at < fs {
		nb = ch.openBlock(fs, offset)
		b, at = nb, 0
	}
	var end int
	if origin == "" {
		end = b.put(at, offset, t, data)
	} else {
		end = b.putFrom(at, offset, t, origin, data)
	}
	b.count++
	b.advance(end) // the frame is now visible
	b.time = t
	ch.last, ch.lastTime, ch.touched = offset, t, max(ch.touched, t)
	ch.appends++
	if nb != nil {
		ch.link(nb)
	}
	// Cursors are armed: have the notifier wake them, unless a round is
	// already pending, which will find them (it takes them after clearing
	// the flag). The flag is loaded first so that while a round is pending
	// the writer does not touch the wait list's line.
	if !ch.wakePending.Load() && ch.waits.n.Load() != 0 {
		ch.wakePending.Store(true)
		notify = true
	}
	if ch.protected {
		// The new message may push the protected head out of the newest
		// HistoryCount: let the sweeper look again.
		ch.protected = false
		ch.s.sw.set(ch, 0) // due at the next sweep
	}
	return nb, notify
}

// openBlock allocates the block for a frame of fs bytes: the channel's next
// size (doubling up to BlockBytes) or the frame's own size if larger. mu.
func (ch *channel) openBlock(fs int, first uint64) *block {
	o := &ch.s.opts
	size := ch.nextSize
	for size < fs && size < o.BlockBytes {
		size *= 2
	}
	size = min(size, o.BlockBytes)
	ch.nextSize = min(2*size, o.BlockBytes)
	if size < fs {
		size = fs
	}
	from := first
	if ch.s.replica() {
		// A replica's offsets skip (they number the whole log): the block
		// covers the gap before its first frame, which no message of this
		// channel holds.
		from = ch.last + 1
	}
	return newBlock(ch, size, from, first)
}

// link makes nb, already holding its first frame, the channel's tail: it
// seals the old tail, publishes a new snapshot and enforces ChannelBytes.
// mu.
func (ch *channel) link(nb *block) {
	s := ch.s
	old := ch.q.Load()
	// Without a head block the channel is queued for a later event (an old
	// block's deletion, or forgetting) than nb's expiry: queue it again.
	noHead := old.head == len(old.blocks)
	ch.tail.next.Store(nb) // seal: readers at the old tail's end move on
	ch.tail = nb
	ch.drained = false
	size := int64(len(nb.buf))
	ch.bytes += size
	s.counters.bytes.Add(size)
	s.counters.memory.Add(blockCost(len(nb.buf)))
	s.counters.blocks.Add(1)
	s.fifo.push(nb)

	// Drop the oldest blocks past the channel limit, never nb.
	drop := 0
	for over := ch.bytes - s.opts.ChannelBytes; over > 0 && drop < len(old.blocks); drop++ {
		over -= int64(len(old.blocks[drop].buf))
	}
	blocks := make([]*block, 0, len(old.blocks)-drop+1)
	blocks = append(blocks, old.blocks[drop:]...)
	blocks = append(blocks, nb)
	// A new block is never old, so the head is the first block not old.
	head := max(old.head-drop, 0)
	ch.q.Store(&queue{blocks: blocks, head: head, next: ch.last + 1})
	if drop > 0 {
		ch.deleteBlocks(old.blocks[:drop], &s.counters.evicted)
		// The evicted blocks may include one held for history, whose
		// deadline was far: the new head's may be nearer.
		ch.protected = false
	}
	if noHead || drop > 0 {
		ch.schedule()
	}
}

// trim stores a new snapshot of q without its first k blocks and with its
// head at head (counted in q), after the sweeper, an evictor or a purge
// moved the head or dropped blocks, then deletes those k blocks, counting
// them in counter. mu.
func (ch *channel) trim(q *queue, k, head int, counter *atomic.Uint64) {
	if k == 0 && head == q.head {
		return
	}
	blocks := make([]*block, len(q.blocks)-k)
	copy(blocks, q.blocks[k:])
	ch.q.Store(&queue{blocks: blocks, head: head - k, next: ch.last + 1})
	if k > 0 {
		ch.deleteBlocks(q.blocks[:k], counter)
	}
}

// deleteBlocks marks blocks deleted and releases their bytes. It wakes
// nobody: a cursor can only lose messages committed past it, and the first
// of those already woke it. mu.
//
// A deleted tail is replaced by an empty anchor linked after it, so that
// the channel no longer holds the block's memory (a quiet channel whose
// only block was evicted would otherwise keep it, uncounted), while
// cursors at its end still find the blocks appended later.
func (ch *channel) deleteBlocks(bs []*block, counter *atomic.Uint64) {
	s := ch.s
	var size, cost int64
	for _, b := range bs {
		b.deleted.Store(true)
		size += int64(len(b.buf))
		cost += blockCost(len(b.buf))
	}
	s.fifo.remove(bs)
	ch.bytes -= size
	s.counters.bytes.Add(-size)
	s.counters.memory.Add(-cost)
	s.counters.blocks.Add(-int64(len(bs)))
	counter.Add(uint64(len(bs)))
	if t := ch.tail; t.deleted.Load() && len(t.buf) > 0 {
		a := newAnchor(ch)
		t.next.Store(a) // seals t: readers at its end move on to a
		ch.tail = a
	}
}

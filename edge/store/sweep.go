package store

import (
	"math"
	"sync"
)

// sweeper is a min-heap of channels by the time the sweeper next needs to
// look at them: the expiry of their head block, the deletion of their
// oldest old block, the end of a history hold, or forgetting. Each live
// channel is in it once, except an empty channel with open cursors (its
// last Cursor.Close puts it back).
type sweeper struct {
	mu   sync.Mutex // guards heap and the channels' sched; a leaf lock
	heap []*channel
}

// heapSlot is a channel's place in the sweeper's heap.
type heapSlot struct {
	idx      int   // index in the heap, -1 when not queued
	deadline int64 // when the sweeper next needs to look at the channel
}

// Sweep runs one expiry pass at Clock.Now(): it looks only at the channels
// whose next event is due, so its cost grows with the blocks it expires.
// The background goroutine calls it every SweepInterval.
func (s *Store) Sweep() {
	now := s.clockNow()
	for {
		ch := s.sw.popDue(now)
		if ch == nil {
			return
		}
		s.sweepChannel(ch, now)
	}
}

// sweepChannel expires ch's blocks at now, then reschedules or forgets it.
func (s *Store) sweepChannel(ch *channel, now int64) {
	ch.mu.Lock()
	if ch.dead {
		ch.mu.Unlock()
		return
	}
	ch.expire(now)
	d, ok := ch.nextDeadline()
	if ok && d <= now && ch.empty() {
		ch.mu.Unlock()
		s.forget(ch, now)
		return
	}
	ch.schedule()
	ch.mu.Unlock()
}

// expire applies retention at now: with T1 = now - TTL, blocks older than
// T1 become old unless they hold one of the newest HistoryCount messages
// younger than HistoryAge; the head moves to the first block not old; old
// blocks older than T2 = T1 - Grace are deleted. mu.
func (ch *channel) expire(now int64) {
	q := ch.q.Load()
	r := &ch.ret
	t1 := now - int64(r.TTL)
	t2 := t1 - int64(r.Grace)
	hold := ch.holdFrom(q)
	ch.protected = false
	h := q.head
	for ; h < len(q.blocks); h++ {
		b := q.blocks[h]
		if b.time >= t1 {
			break
		}
		if h >= hold && b.time >= now-int64(r.HistoryAge) {
			ch.protected = true
			break
		}
		b.old = true
	}
	k := 0
	for k < h && q.blocks[k].time < t2 {
		k++
	}
	ch.trim(q, k, h, &ch.s.counters.expired)
}

// holdFrom returns the index of the oldest block holding one of the newest
// HistoryCount messages, or len(q.blocks) when history is disabled. mu.
func (ch *channel) holdFrom(q *queue) int {
	n := ch.ret.HistoryCount
	if n <= 0 {
		return len(q.blocks)
	}
	for i := len(q.blocks) - 1; i >= 0; i-- {
		if n -= q.blocks[i].count; n <= 0 {
			return i
		}
	}
	return 0
}

// nextDeadline returns when the sweeper next needs to look at ch, or
// ok=false when only a Cursor.Close can change anything. mu.
func (ch *channel) nextDeadline() (d int64, ok bool) {
	q := ch.q.Load()
	r := &ch.ret
	if len(q.blocks) == 0 {
		if ch.cursors > 0 {
			return 0, false
		}
		if ch.drained {
			return 0, true // due now
		}
		return ch.touched + int64(r.TTL+r.Grace) + 1, true
	}
	d = math.MaxInt64
	if q.head > 0 { // the oldest old block is deleted once before T2
		d = q.blocks[0].time + int64(r.TTL+r.Grace) + 1
	}
	if b := q.headBlock(); b != nil {
		if ch.protected {
			d = min(d, b.time+int64(r.HistoryAge)+1)
		} else {
			d = min(d, b.time+int64(r.TTL)+1)
		}
	}
	return d, true
}

// schedule (re)queues ch at its next deadline. mu.
func (ch *channel) schedule() {
	if d, ok := ch.nextDeadline(); ok {
		ch.s.sw.set(ch, d)
	} else {
		ch.s.sw.remove(ch)
	}
}

// set queues ch at deadline d, or moves it there.
func (sw *sweeper) set(ch *channel, d int64) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	ch.sched.deadline = d
	if ch.sched.idx >= 0 {
		sw.fix(ch.sched.idx)
		return
	}
	ch.sched.idx = len(sw.heap)
	sw.heap = append(sw.heap, ch)
	sw.up(ch.sched.idx)
}

// remove takes ch out of the heap if it is there.
func (sw *sweeper) remove(ch *channel) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	i := ch.sched.idx
	if i < 0 {
		return
	}
	sw.swap(i, len(sw.heap)-1)
	sw.heap[len(sw.heap)-1] = nil
	sw.heap = sw.heap[:len(sw.heap)-1]
	ch.sched.idx = -1
	if i < len(sw.heap) {
		sw.fix(i)
	}
}

// popDue removes and returns a channel whose deadline is <= now, or nil.
func (sw *sweeper) popDue(now int64) *channel {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if len(sw.heap) == 0 || sw.heap[0].sched.deadline > now {
		return nil
	}
	ch := sw.heap[0]
	n := len(sw.heap) - 1
	sw.swap(0, n)
	sw.heap[n] = nil
	sw.heap = sw.heap[:n]
	ch.sched.idx = -1
	if n > 0 {
		sw.down(0)
	}
	return ch
}

func (sw *sweeper) fix(i int) {
	if !sw.up(i) {
		sw.down(i)
	}
}

// up moves the entry at i toward the root; it reports whether it moved.
func (sw *sweeper) up(i int) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if sw.heap[p].sched.deadline <= sw.heap[i].sched.deadline {
			break
		}
		sw.swap(i, p)
		i, moved = p, true
	}
	return moved
}

func (sw *sweeper) down(i int) {
	n := len(sw.heap)
	for {
		c := 2*i + 1
		if c >= n {
			return
		}
		if r := c + 1; r < n && sw.heap[r].sched.deadline < sw.heap[c].sched.deadline {
			c = r
		}
		if sw.heap[i].sched.deadline <= sw.heap[c].sched.deadline {
			return
		}
		sw.swap(i, c)
		i = c
	}
}

func (sw *sweeper) swap(i, j int) {
	h := sw.heap
	h[i], h[j] = h[j], h[i]
	h[i].sched.idx, h[j].sched.idx = i, j
}

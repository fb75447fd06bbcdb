package store

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/sluicehq/sluice/shared/rtm"
)

// OutOfSyncError is returned by Cursor.Read when messages the cursor had
// not read yet were deleted (expired past the grace period, or evicted).
// errors.Is(err, ErrOutOfSync) is true.
type OutOfSyncError struct {
	Missed   uint64       // messages from Position up to Head that are lost to the cursor
	Position rtm.Position // where the cursor was
	Head     rtm.Position // where the oldest readable message is (or the next one)
}

// Error describes the loss.
func (e *OutOfSyncError) Error() string {
	return fmt.Sprintf("store: cursor out of sync at %v: %d messages missed, head at %v",
		e.Position, e.Missed, e.Head)
}

// Is makes errors.Is(err, ErrOutOfSync) true.
func (e *OutOfSyncError) Is(target error) bool { return target == ErrOutOfSync }

// Cursor follows one channel from a position toward the tail, without
// locks: it is a subscription's read point. Read, Wait, FastForward and
// Position must be called from one goroutine at a time; Close may be called
// from any goroutine.
type Cursor struct {
	ch *channel

	// Owned by the reading goroutine (and read under ch.mu by FastForward,
	// which that goroutine calls).
	blk  *block // block it reads; may be deleted, or a channel's anchor
	off  int    // byte offset in blk of the next frame to look at
	next uint64 // smallest offset it still wants: its position
	oos  bool   // it reported out of sync and has not fast-forwarded yet
	// origins says a frame the last Read returned has an origin.
	origins bool

	closed atomic.Bool // set once by Close; checked by Read and Wait
	armed  bool        // ch.waits.mu: in ch.waits.armed, waiting for a Wake
	// onClose runs once Close is done: what the cursor's opener holds for
	// it (an interest in the channel's feed) is let go.
	onClose func()
}

// OnClose sets f to run once, after the cursor closes. Set it before
// handing the cursor on.
func (c *Cursor) OnClose(f func()) { c.onClose = f }

// Origins reports whether a frame the last Read returned has an origin
// (Frame.Origin): a reader acting on origins looks at no frame when none
// has one, as nearly always.
func (c *Cursor) Origins() bool { return c.origins }

// MarkDelivered records that the channel's messages up to offset have
// reached a subscriber, and returns the previous mark: the messages above it
// (up to offset) reached one for the first time. Only the first subscriber
// past a message pays a compare-and-swap; the others, one atomic load.
func (c *Cursor) MarkDelivered(offset uint64) (prev uint64) {
	m := &c.ch.delivered
	for {
		old := m.Load()
		if old >= offset || m.CompareAndSwap(old, offset) {
			return old
		}
	}
}

// Head returns the oldest offset its channel holds for new readers (the
// head block's first offset, or the next one when it holds none). In a
// replica, a history that starts after it was not cut short by the
// replica's own beginning.
func (c *Cursor) Head() uint64 { return c.ch.q.Load().headOffset() }

// Key returns the key of the channel the cursor reads: where a
// subscription whose cursor fell out of sync may be opened again
// (through a log that kept what the store let go).
func (c *Cursor) Key() string { return c.ch.name }

// Position returns the position the cursor reads next.
func (c *Cursor) Position() rtm.Position {
	return rtm.Position{Epoch: c.ch.epoch, Offset: c.next}
}

// Read appends to dst the frames committed past the cursor, in order, and
// advances past them: at least one if any is ready, then more while their
// Data totals at most maxBytes (no limit if maxBytes <= 0). When dst has
// spare capacity Read fills at most that, so it never allocates. It returns
// frames or an error, never both: an *OutOfSyncError when the next message
// it wants was deleted before it read it; the cursor stays there, and Read
// keeps returning the error, until FastForward.
func (c *Cursor) Read(dst []Frame, maxBytes int) ([]Frame, error) {
	c.origins = false
	if c.closed.Load() {
		return dst, ErrClosed
	}
	room := cap(dst) - len(dst)
	if room == 0 {
		room = -1
	}
	n, size := 0, 0
	b, at := c.blk, c.off
	for {
		end := b.end()
		if at < end && b.deleted.Load() {
			// Frames below next (a future start) were never wanted.
			if at = b.seek(at, end, c.next); at < end {
				c.blk, c.off = b, at
				if n > 0 {
					return dst, nil // the loss is reported by the next Read
				}
				return dst, c.outOfSync()
			}
		}
		for at < end {
			// Decoded in place (not via block.frame) so the Frame is built
			// once, in dst: copying it would cost more than decoding it.
			p := b.buf[at:end]
			head := binary.LittleEndian.Uint32(p)
			dl := int(head & lenMask)
			if o := binary.LittleEndian.Uint64(p[4:]); o >= c.next {
				if n > 0 && (n == room || maxBytes > 0 && size+dl > maxBytes) {
					c.blk, c.off = b, at
					return dst, nil
				}
				if len(dst) < cap(dst) {
					dst = dst[:len(dst)+1]
				} else {
					dst = append(dst, Frame{})
				}
				// Field by field: a whole-struct store goes through a
				// stack temporary and stalls on store forwarding.
				f := &dst[len(dst)-1]
				f.Offset = o
				f.Time = int64(binary.LittleEndian.Uint64(p[12:]))
				f.Data, f.Origin = p[hdrLen:hdrLen+dl:hdrLen+dl], nil
				if head&originFlag != 0 {
					f.Data, f.Origin = splitOrigin(f.Data)
					c.origins = true
				}
				n++
				size += dl
				c.next = o + 1
			}
			at += dl + frameOverhead
		}
		nb := b.next.Load()
		if nb == nil {
			break
		}
		if b.end() != at {
			continue // frames committed before the seal
		}
		if nb.droppedBefore(c.next) {
			c.blk, c.off = b, at
			if n > 0 {
				return dst, nil // the loss is reported by the next Read
			}
			return dst, c.outOfSync()
		}
		b, at = nb, 0
	}
	c.blk, c.off = b, at
	return dst, nil
}

// ready reports whether Read would return something: a frame (or a
// deletion) past the cursor.
func (c *Cursor) ready() bool {
	return c.blk.end() > c.off || c.blk.next.Load() != nil
}

// Wait arms the cursor: w.Wake() is called once, by the store's notifier
// goroutine, after a message past the cursor is committed. (A cursor only
// goes out of sync by losing messages committed past it, so that wake also
// covers it.) If something is already ready (or the cursor is closed) it
// arms nothing and returns false: call Read. Appends wake only the cursors
// armed since they last read, so a reader costs no goroutine switch per
// message. Calling Wait again while armed keeps the first waker.
func (c *Cursor) Wait(w Waker) bool {
	if c.closed.Load() {
		return false
	}
	return c.ch.waits.arm(c, w, c.ready)
}

// Close releases the cursor; once it returns the waker is never called
// (Close waits for a wake round in progress on the channel, so it must not
// be called from a Waker). An empty channel without cursors may then be
// forgotten. Idempotent.
func (c *Cursor) Close() {
	if c.closed.Swap(true) {
		return
	}
	ch := c.ch
	ch.waits.disarm(c) // outside mu: appends need not wait for a round
	ch.mu.Lock()
	forget := false
	if ch.cursors--; ch.empty() {
		if ch.appends == 0 {
			// Made by subscribers alone: it lingers from now, for the
			// last of them to come back to it (see channel.drained).
			ch.touched = max(ch.touched, ch.s.stampNow())
		}
		// A channel holding nothing worth keeping goes now, not at the
		// next sweep (forget checks again, under the shard's lock).
		forget = ch.drained
		ch.schedule()
	}
	ch.mu.Unlock()
	if forget {
		ch.s.forget(ch, ch.s.clockNow())
	}
	if c.onClose != nil {
		c.onClose()
	}
}

// FastForward moves a cursor whose read point is before the head (out of
// sync, or still finishing an old block) to the head, the oldest message
// new readers may start at, and returns how many messages it skipped and
// its new position. A cursor at or past the head stays (missed = 0).
func (c *Cursor) FastForward() (missed uint64, pos rtm.Position) {
	ch := c.ch
	ch.mu.Lock()
	defer ch.mu.Unlock()
	q := ch.q.Load()
	missed = c.missed(q)
	if next := max(c.next, q.headOffset()); c.behind() {
		c.at(q, next)
	} else {
		c.next = next // nothing stored between: only the position moves
	}
	c.oos = false
	return missed, c.Position()
}

// outOfSync builds the error for a cursor that found a deleted message it
// wanted, and counts the event once per loss.
func (c *Cursor) outOfSync() error {
	ch := c.ch
	ch.mu.Lock()
	q := ch.q.Load()
	e := &OutOfSyncError{
		Missed:   c.missed(q),
		Position: c.Position(),
		Head:     rtm.Position{Epoch: ch.epoch, Offset: q.headOffset()},
	}
	ch.mu.Unlock()
	if !c.oos {
		c.oos = true
		ch.s.counters.outOfSync.Add(1)
	}
	return e
}

// behind reports whether the cursor's block is before the head (deleted,
// old, or an anchor). mu.
func (c *Cursor) behind() bool {
	return c.blk.deleted.Load() || c.blk.old
}

// missed counts the messages the cursor still wants (offset >= next) from
// its read point up to the head, or to the end when there is no head. mu.
func (c *Cursor) missed(q *queue) uint64 {
	if !c.behind() {
		return 0
	}
	head := q.headBlock()
	n, unheld := 0, false
	for b, at := c.blk, c.off; b != nil && b != head; b, at = b.next.Load(), 0 {
		if at == 0 && b.first >= c.next {
			n += b.count
		} else {
			n += b.countFrom(at, b.end(), c.next)
		}
		unheld = unheld || b != c.blk && b.droppedBefore(c.next)
	}
	if unheld && n == 0 {
		n = 1 // dropped without being held: the message purged last, at least
	}
	return uint64(n)
}

// droppedBefore reports whether b is an anchor starting past offset: the
// channel dropped offsets before it that it never held (PurgeThrough). An
// anchor otherwise starts where its channel's last message left off, so a
// cursor that read up to it wants no offset before it.
func (b *block) droppedBefore(offset uint64) bool {
	return len(b.buf) == 0 && b.from > offset
}

// Held counts the messages its channel holds from the cursor's position
// on, at most limit: how much of a history a replica serves itself, so
// that the log is asked only for what came before its head.
func (c *Cursor) Held(limit int) int {
	ch := c.ch
	ch.mu.Lock()
	defer ch.mu.Unlock()
	q := ch.q.Load() // current: replaced only under mu
	from := max(c.next, q.headOffset())
	if q.headBlock() == nil || from > ch.last {
		return 0
	}
	n := 0
	for i := q.find(from); i < len(q.blocks) && n < limit; i++ {
		b := q.blocks[i]
		if b.first >= from {
			n += b.count
		} else {
			n += b.countFrom(0, b.end(), from)
		}
	}
	return min(n, limit)
}

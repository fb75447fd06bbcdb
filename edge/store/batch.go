package store

// Batch is a view of consecutive frames of one block, taken by
// Cursor.ReadBatch without decoding them: Len, First, Last and Size cost a
// field load each, and Next or ForEach decode frames for the consumers
// that need them. Like any Frame's, the Data of its frames aliases the
// block and stays valid as long as the caller keeps it. A Batch is a
// value owned by its caller: use it from one goroutine at a time.
type Batch struct {
	b           *block
	from, to    int    // byte range of its frames in b
	n           int    // number of frames, from the block's counts
	first, last uint64 // offsets of its first and last frames
	it          int    // byte offset in b of the frame Next returns
}

// Len returns the number of frames in the batch (0: nothing was ready).
// It is counted, not derived from offsets, which may skip.
func (bt *Batch) Len() int { return bt.n }

// First returns the offset of the batch's first frame (0 if empty).
func (bt *Batch) First() uint64 { return bt.first }

// Last returns the offset of the batch's last frame (0 if empty).
func (bt *Batch) Last() uint64 { return bt.last }

// Size returns the total length of the Data of the batch's frames.
func (bt *Batch) Size() int { return bt.to - bt.from - bt.n*frameOverhead }

// Next decodes the batch's next frame into f and reports whether there
// was one: `for bt.Next(&f) { ... }` visits every frame once, in order.
func (bt *Batch) Next(f *Frame) bool {
	if bt.it >= bt.to {
		return false
	}
	*f, bt.it = bt.b.frame(bt.it)
	return true
}

// ForEach calls yield with each frame of the batch in order until it
// returns false. It does not move Next's position, and it is an
// iter.Seq[Frame]: `for f := range bt.ForEach { ... }`.
func (bt *Batch) ForEach(yield func(Frame) bool) {
	for at := bt.from; at < bt.to; {
		var f Frame
		f, at = bt.b.frame(at)
		if !yield(f) {
			return
		}
	}
}

// ReadBatch takes the frames committed past the cursor in one block, up to
// the boundary, as a Batch, and advances past them. It decodes no frame
// (it reads the first and last headers), so following a channel costs
// O(1) per batch whatever the batch holds: a follower that forwards whole
// batches or only counts them pays nothing per message. Like Read, it
// skips the frames below the cursor's position (a start in the future:
// those are scanned once) and fails with an *OutOfSyncError, until
// FastForward, when the next message it wants was deleted. An empty batch
// and a nil error mean nothing is ready: Wait. A batch ends at a block's
// end, so a caller draining the cursor calls ReadBatch until it is empty.
func (c *Cursor) ReadBatch() (Batch, error) {
	if c.closed.Load() {
		return Batch{}, ErrClosed
	}
	b, at, idx := c.blk, c.off, c.idx
	for {
		end, count := b.published()
		if at < end {
			if !b.deleted.Load() {
				if idx < 0 {
					idx = b.countTo(at) // after Read: count once
				}
				if bt, ok := c.take(b, at, end, idx, count); ok {
					return bt, nil
				}
			} else if at = b.seek(at, end, c.next); at < end {
				// As in Read: frames below next were never wanted.
				c.blk, c.off, c.idx = b, at, -1
				return Batch{}, c.outOfSync()
			}
			at, idx = end, count
		}
		nb := b.next.Load()
		if nb == nil {
			break
		}
		if b.end() != at {
			continue // frames committed before the seal
		}
		b, at, idx = nb, 0, 0
	}
	c.blk, c.off, c.idx = b, at, idx
	return Batch{}, nil
}

// take makes the batch of b's frames from at (the idx-th) to end (count
// frames before it), less those below the cursor's position, and moves the
// cursor past it. ok is false if every one is below the position.
func (c *Cursor) take(b *block, at, end, idx, count int) (bt Batch, ok bool) {
	first, _ := b.offsetAt(at)
	if first < c.next {
		var k int
		if at, k = b.seekCount(at, end, c.next); at == end {
			return Batch{}, false
		}
		idx += k
		first, _ = b.offsetAt(at)
	}
	last, _ := b.offsetAt(b.lastStart(end))
	c.blk, c.off, c.idx, c.next = b, end, count, last+1
	return Batch{b: b, from: at, to: end, n: count - idx, first: first, last: last, it: at}, true
}

package store

import (
	"encoding/binary"
	"sync/atomic"
)

// Frame layout: header [length u32][offset u64][time i64], the data, then
// the length again so a reader can step back from a block's end.
const (
	hdrLen        = 4 + 8 + 8
	trailerLen    = 4
	frameOverhead = hdrLen + trailerLen
	maxDataLen    = 1<<32 - 1
)

// A block's boundary and frame count are published together in one atomic
// word, so a reader gets the count of the frames before the boundary it
// loaded (Cursor.ReadBatch counts a batch in O(1)): the byte boundary in
// the low countShift bits, the count above them.
const (
	countShift    = 40
	endMask       = 1<<countShift - 1
	maxBlockBytes = endMask // a block's capacity fits in the end field
)

// maxBlockFrames bounds the frames of a block so the count fits in its
// field: the writer opens a new block at this count. Only blocks of
// hundreds of megabytes of tiny messages reach it. A variable so that
// tests can lower it.
var maxBlockFrames = 1<<(64-countShift) - 1

// Frame is one stored message.
type Frame struct {
	Offset uint64 // the OFFSET of its position
	Time   int64  // when it was appended, unix nanos
	// Data aliases the block's memory: it is never mutated afterwards and
	// stays valid as long as the caller keeps it. Do not modify it; its
	// capacity is clipped so append copies.
	Data []byte
}

// block is a fixed-capacity buffer of frames. Bytes before boundary are
// immutable and readable by anyone without a lock; bytes after it belong to
// the channel's writer.
type block struct {
	// Immutable once the block is linked into its channel.
	buf   []byte // capacity of the block; never reused
	first uint64 // offset of its first frame
	// from is the lowest offset the block covers. In a standalone store it
	// is first. In a replica (Options.Epoch), whose offsets skip, it is
	// the channel's last offset + 1 when the block was opened: a position
	// between the previous block's last frame and this block's first is
	// not expired while this block is the head.
	from uint64
	ch   *channel // owner, for the store-wide eviction FIFO

	// pub is the boundary (the number of readable bytes, low countShift
	// bits) and the count of the frames before it (high bits). Written
	// only by the channel's writer (under channel.mu), one store per frame,
	// after the frame's bytes; loaded by readers before they read.
	pub atomic.Uint64
	// next is the follow-on block. Stored once by the writer (under
	// channel.mu) after its last frame here, which seals this block.
	next atomic.Pointer[block]
	// deleted is set once by the sweeper or an evictor (under channel.mu);
	// a reader that finds it set with frames unread is out of sync.
	deleted atomic.Bool

	// Guarded by channel.mu (writer and sweeper).
	count int   // frames in the block
	time  int64 // time of its newest frame, unix nanos
	old   bool  // before the head: no new reads may start here

	// Guarded by fifo.mu: the store-wide creation-order list.
	fprev, fnext *block
}

// newBlock returns an empty block of the given capacity.
func newBlock(ch *channel, size int, from, first uint64) *block {
	return &block{buf: make([]byte, size), from: from, first: first, ch: ch}
}

// end loads the boundary: the bytes before it are readable.
func (b *block) end() int { return int(b.pub.Load() & endMask) }

// published loads the boundary and the number of frames before it, as one.
func (b *block) published() (end, count int) {
	p := b.pub.Load()
	return int(p & endMask), int(p >> countShift)
}

// publish makes the frames up to end, count in all, readable. Writer only.
func (b *block) publish(end, count int) {
	b.pub.Store(uint64(end) | uint64(count)<<countShift)
}

// put writes a frame at byte offset at (which must be the boundary) and
// returns its end. The caller publishes it by storing the boundary.
func (b *block) put(at int, offset uint64, t int64, data []byte) int {
	p := b.buf[at : at+len(data)+frameOverhead]
	binary.LittleEndian.PutUint32(p, uint32(len(data)))
	binary.LittleEndian.PutUint64(p[4:], offset)
	binary.LittleEndian.PutUint64(p[12:], uint64(t))
	copy(p[hdrLen:], data)
	binary.LittleEndian.PutUint32(p[hdrLen+len(data):], uint32(len(data)))
	return at + len(p)
}

// frame decodes the frame at byte offset at, which must be before the
// boundary, and returns it with the offset of the frame after it.
func (b *block) frame(at int) (Frame, int) {
	p := b.buf[at:]
	n := int(binary.LittleEndian.Uint32(p))
	end := hdrLen + n
	return Frame{
		Offset: binary.LittleEndian.Uint64(p[4:]),
		Time:   int64(binary.LittleEndian.Uint64(p[12:])),
		Data:   p[hdrLen:end:end],
	}, at + end + trailerLen
}

// offsetAt returns the offset of the frame at at and the start of the next.
func (b *block) offsetAt(at int) (uint64, int) {
	p := b.buf[at:]
	n := int(binary.LittleEndian.Uint32(p))
	return binary.LittleEndian.Uint64(p[4:]), at + n + frameOverhead
}

// lastStart returns where the frame ending at end (> 0) starts.
func (b *block) lastStart(end int) int {
	n := int(binary.LittleEndian.Uint32(b.buf[end-trailerLen:]))
	return end - n - frameOverhead
}

// seek returns the byte offset of the first frame at or after from whose
// offset is >= offset, or end if none is before end.
func (b *block) seek(from, end int, offset uint64) int {
	at, _ := b.seekCount(from, end, offset)
	return at
}

// countFrom counts the frames between from and end whose offset is >=
// offset.
func (b *block) countFrom(from, end int, offset uint64) int {
	n := 0
	for at := from; at < end; {
		o, next := b.offsetAt(at)
		if o >= offset {
			n++
		}
		at = next
	}
	return n
}

// seekCount is seek that also returns how many frames it passed.
func (b *block) seekCount(from, end int, offset uint64) (at, k int) {
	for at = from; at < end; {
		o, next := b.offsetAt(at)
		if o >= offset {
			return at, k
		}
		at, k = next, k+1
	}
	return end, k
}

// countTo returns the number of frames before byte offset to.
func (b *block) countTo(to int) int {
	k := 0
	for at := 0; at < to; k++ {
		_, at = b.offsetAt(at)
	}
	return k
}

// nth returns the byte offset of the k-th frame (0-based), k < count.
func (b *block) nth(k int) int {
	at := 0
	for ; k > 0; k-- {
		_, at = b.offsetAt(at)
	}
	return at
}

// seekTime returns the byte offset of the first frame whose time is >= t,
// or end if none is before end.
func (b *block) seekTime(end int, t int64) int {
	for at := 0; at < end; {
		f, next := b.frame(at)
		if f.Time >= t {
			return at
		}
		at = next
	}
	return end
}

package store

import (
	"encoding/binary"
	"sync/atomic"
)

// Frame layout: header [length u32][offset u64][time i64], the body, then
// the length again so a reader can step back from a block's end. The
// body is the data, or, when the header's length has originFlag set,
// [origin length u8][origin][data]: a message without an origin (nearly
// all) costs no byte more, and readers one bit test.
const (
	hdrLen        = 4 + 8 + 8
	trailerLen    = 4
	frameOverhead = hdrLen + trailerLen
	originFlag    = 1 << 31
	lenMask       = originFlag - 1
	maxBodyLen    = lenMask
)

// MaxOriginBytes bounds a message's origin (AppendFrom).
const MaxOriginBytes = 255

// Frame is one stored message.
type Frame struct {
	Offset uint64 // the OFFSET of its position
	Time   int64  // when it was appended, unix nanos
	// Data aliases the block's memory: it is never mutated afterwards and
	// stays valid as long as the caller keeps it. Do not modify it; its
	// capacity is clipped so append copies.
	Data []byte
	// Origin is the tag its publisher gave it (AppendFrom), nil for none.
	// It aliases the block's memory as Data does, under the same rules.
	Origin []byte
}

// bodyLen is the length of the body of a frame of data from origin.
func bodyLen(origin string, data []byte) int {
	if origin == "" {
		return len(data)
	}
	return 1 + len(origin) + len(data)
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

	// boundary is the number of readable bytes. Written only by the
	// channel's writer (under channel.mu), one store per frame, after the
	// frame's bytes; loaded by readers before they read.
	boundary atomic.Int64
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
func (b *block) end() int { return int(b.boundary.Load()) }

// advance moves the boundary to end, making the frames before it
// readable. Writer only.
func (b *block) advance(end int) { b.boundary.Store(int64(end)) }

// put writes a frame without an origin at byte offset at (which must be
// the boundary) and returns its end. The caller makes it readable with
// advance. (It stays small enough to be inlined into the writer:
// putFrom is the frame with an origin.)
func (b *block) put(at int, offset uint64, t int64, data []byte) int {
	p := b.buf[at : at+len(data)+frameOverhead]
	binary.LittleEndian.PutUint32(p, uint32(len(data)))
	binary.LittleEndian.PutUint64(p[4:], offset)
	binary.LittleEndian.PutUint64(p[12:], uint64(t))
	copy(p[hdrLen:], data)
	binary.LittleEndian.PutUint32(p[hdrLen+len(data):], uint32(len(data)))
	return at + len(p)
}

// putFrom is put of a frame with an origin (not "").
func (b *block) putFrom(at int, offset uint64, t int64, origin string, data []byte) int {
	n := bodyLen(origin, data)
	p := b.buf[at : at+n+frameOverhead]
	binary.LittleEndian.PutUint32(p, uint32(n)|originFlag)
	binary.LittleEndian.PutUint64(p[4:], offset)
	binary.LittleEndian.PutUint64(p[12:], uint64(t))
	body := p[hdrLen : hdrLen+n]
	body[0] = byte(len(origin))
	copy(body[1+copy(body[1:], origin):], data)
	binary.LittleEndian.PutUint32(p[hdrLen+n:], uint32(n))
	return at + len(p)
}

// frame decodes the frame at byte offset at, which must be before the
// boundary.
func (b *block) frame(at int) Frame {
	f, head, _ := b.frameBody(at)
	if head&originFlag != 0 {
		f.Data, f.Origin = splitOrigin(f.Data)
	}
	return f
}

// frameBody is frame with the frame's whole body as Data (an origin
// included, which its header's length field says), and the offset of the
// frame after it: for the readers that want the frame's time alone.
func (b *block) frameBody(at int) (f Frame, head uint32, next int) {
	p := b.buf[at:]
	head = binary.LittleEndian.Uint32(p)
	end := hdrLen + int(head&lenMask)
	f.Offset = binary.LittleEndian.Uint64(p[4:])
	f.Time = int64(binary.LittleEndian.Uint64(p[12:]))
	f.Data = p[hdrLen:end:end]
	return f, head, at + end + trailerLen
}

// splitOrigin returns the data and the origin of the body of a frame
// with an origin (originFlag).
func splitOrigin(body []byte) (data, origin []byte) {
	n := 1 + int(body[0])
	return body[n:], body[1:n:n]
}

// offsetAt returns the offset of the frame at at and the start of the next.
func (b *block) offsetAt(at int) (uint64, int) {
	p := b.buf[at:]
	n := int(binary.LittleEndian.Uint32(p) & lenMask)
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
	for at := from; at < end; {
		o, next := b.offsetAt(at)
		if o >= offset {
			return at
		}
		at = next
	}
	return end
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
		f, _, next := b.frameBody(at)
		if f.Time >= t {
			return at
		}
		at = next
	}
	return end
}

package store

import (
	"math/rand/v2"

	"github.com/sluicehq/sluice/shared/rtm"
)

// The model: channels as plain lists of messages grouped in blocks, with
// the retention and memory rules applied by brute force to every channel
// at every sweep. It shares no code with the store but its options.

type mMsg struct {
	off  uint64
	t    int64
	data []byte
}

type mBlock struct {
	ch           *mChan
	msgs         []mMsg
	size, used   int
	t            int64
	old, deleted bool
}

type mChan struct {
	name     string
	epoch    uint64
	ret      Retention
	blocks   []*mBlock // every block of this incarnation, deleted ones too
	last     uint64
	lastTime int64
	touched  int64
	nextSize int
	bytes    int64
	cursors  int
	followed bool   // a cursor was opened on it
	appends  uint64 // messages appended to this incarnation
	drained  bool   // the store limit evicted its last block
}

type mCursor struct {
	c    *Cursor
	ch   *mChan
	next uint64
	oos  bool
}

type model struct {
	s      *Store // for its options and to learn epochs
	clk    *fakeClock
	chans  map[string]*mChan
	order  []*mBlock // every block ever, in creation order
	epochs map[uint64]bool
	bytes  int64
	memory int64 // what the store counts against StoreBytes

	appends, expired, evicted, outOfSync uint64
}

func newModel(s *Store, clk *fakeClock) *model {
	return &model{s: s, clk: clk, chans: map[string]*mChan{}, epochs: map[uint64]bool{}}
}

func (m *model) now() int64 { return m.clk.Now().UnixNano() }

// obtain returns the channel, creating it as the store would; it learns
// the epoch from the store's Next and checks it is new.
func (m *model) obtain(name string) *mChan {
	if ch := m.chans[name]; ch != nil {
		return ch
	}
	ch := &mChan{name: name, ret: m.s.opts.retention(name), touched: m.now(), nextSize: m.s.opts.FirstBlockBytes}
	ch.epoch = m.s.Next(name).Epoch
	if m.epochs[ch.epoch] {
		panic("model: an epoch came back")
	}
	m.epochs[ch.epoch] = true
	m.chans[name] = ch
	m.memory += channelOverhead + int64(len(name))
	return ch
}

// forget drops a channel, as the store forgets it.
func (m *model) forget(ch *mChan) {
	delete(m.chans, ch.name)
	m.memory -= channelOverhead + int64(len(ch.name))
}

func (ch *mChan) live() []*mBlock {
	var out []*mBlock
	for _, b := range ch.blocks {
		if !b.deleted {
			out = append(out, b)
		}
	}
	return out
}

// readable returns the messages new readers may see: from the first block
// neither deleted nor old.
func (ch *mChan) readable() []mMsg {
	var out []mMsg
	for _, b := range ch.blocks {
		if !b.deleted && !b.old {
			out = append(out, b.msgs...)
		}
	}
	return out
}

func (ch *mChan) headOffset() uint64 {
	if r := ch.readable(); len(r) > 0 {
		return r[0].off
	}
	return ch.last + 1
}

func (m *model) append(name string, off uint64, t int64, at bool, data []byte) (rtm.Position, error) {
	fs := len(data) + frameOverhead
	if at && off == 0 {
		return rtm.Position{}, ErrOffsetOrder
	}
	if int64(fs) > m.s.opts.ChannelBytes || int64(fs) > m.s.opts.StoreBytes {
		return rtm.Position{}, ErrTooLarge
	}
	ch := m.obtain(name)
	if !at {
		off = ch.last + 1
	} else if off <= ch.last {
		return rtm.Position{}, ErrOffsetOrder
	}
	t = max(t, ch.lastTime)
	var tail, nb *mBlock
	if len(ch.blocks) > 0 {
		tail = ch.blocks[len(ch.blocks)-1]
	}
	if tail == nil || tail.deleted || tail.old || tail.size-tail.used < fs {
		nb = m.open(ch, fs)
		tail = nb
	}
	tail.msgs = append(tail.msgs, mMsg{off: off, t: t, data: data})
	tail.used += fs
	tail.t = t
	ch.last, ch.lastTime, ch.touched = off, t, max(ch.touched, t)
	m.appends++
	ch.appends++
	if nb != nil {
		m.evict(ch, nb)
	}
	return rtm.Position{Epoch: ch.epoch, Offset: off}, nil
}

// open adds a block sized as the store sizes them.
func (m *model) open(ch *mChan, fs int) *mBlock {
	bb := m.s.opts.BlockBytes
	size := ch.nextSize
	for size < fs && size < bb {
		size *= 2
	}
	size = min(size, bb)
	ch.nextSize = min(2*size, bb)
	size = max(size, fs)
	b := &mBlock{ch: ch, size: size}
	ch.blocks = append(ch.blocks, b)
	m.order = append(m.order, b)
	ch.bytes += int64(size)
	m.bytes += int64(size)
	m.memory += int64(size) + blockOverhead
	ch.drained = false
	return b
}

// evict applies the channel limit, then the store limit, sparing nb; a
// channel the store limit leaves without blocks is forgotten at once
// unless a cursor is open on it.
func (m *model) evict(ch *mChan, nb *mBlock) {
	for ch.bytes > m.s.opts.ChannelBytes {
		b := ch.live()[0]
		if b == nb {
			break
		}
		m.delete(b)
		m.evicted++
	}
	for m.memory > m.s.opts.StoreBytes {
		var oldest *mBlock
		for _, b := range m.order {
			if !b.deleted {
				oldest = b
				break
			}
		}
		if oldest == nb {
			break
		}
		m.delete(oldest)
		m.evicted++
		if v := oldest.ch; len(v.live()) == 0 {
			v.drained = true
			if v.cursors == 0 {
				m.forget(v)
			}
		}
	}
}

func (m *model) delete(b *mBlock) {
	b.deleted = true
	b.ch.bytes -= int64(b.size)
	m.bytes -= int64(b.size)
	m.memory -= int64(b.size) + blockOverhead
}

func (m *model) read(name string, p *rtm.Position) (mMsg, bool, error) {
	ch := m.chans[name]
	if ch == nil {
		if p != nil {
			return mMsg{}, false, ErrExpired
		}
		return mMsg{}, false, nil
	}
	r := ch.readable()
	if p == nil {
		if len(r) == 0 {
			return mMsg{}, false, nil
		}
		return r[len(r)-1], true, nil
	}
	if p.Epoch != ch.epoch || p.Offset < ch.headOffset() {
		return mMsg{}, false, ErrExpired
	}
	for _, msg := range r {
		if msg.off >= p.Offset {
			return msg, true, nil
		}
	}
	return mMsg{}, false, nil
}

func (m *model) subscribe(name string, st Start) (*mCursor, error) {
	var ch *mChan
	var next uint64
	if p := st.Position; p != nil {
		if ch = m.chans[name]; ch == nil || p.Epoch != ch.epoch || p.Offset < ch.headOffset() {
			return nil, ErrExpired
		}
		if p.Offset > ch.last+1 {
			return nil, ErrFuture
		}
		next = p.Offset
	} else {
		ch = m.obtain(name)
		next = ch.last + 1
		r := ch.readable()
		if st.HistoryCount > 0 && len(r) > 0 {
			next = r[max(0, len(r)-st.HistoryCount)].off
		}
		if st.HistoryAge > 0 {
			cut := m.now() - int64(st.HistoryAge)
			for _, msg := range r {
				if msg.t >= cut {
					next = min(next, msg.off)
					break
				}
			}
		}
	}
	ch.cursors++
	ch.followed = true
	return &mCursor{ch: ch, next: next}, nil
}

// all returns every message of the channel with whether it is deleted.
func (ch *mChan) all() (msgs []mMsg, deleted []bool) {
	for _, b := range ch.blocks {
		for _, msg := range b.msgs {
			msgs = append(msgs, msg)
			deleted = append(deleted, b.deleted)
		}
	}
	return msgs, deleted
}

// missed counts the messages a cursor wants before the head.
func (ch *mChan) missed(next uint64) uint64 {
	head := ch.headOffset()
	msgs, _ := ch.all()
	var n uint64
	for _, msg := range msgs {
		if msg.off >= next && msg.off < head {
			n++
		}
	}
	return n
}

func (m *model) cursorRead(mc *mCursor, maxBytes int) ([]mMsg, *OutOfSyncError) {
	ch := mc.ch
	msgs, deleted := ch.all()
	var out []mMsg
	size := 0
	for i, msg := range msgs {
		if msg.off < mc.next {
			continue
		}
		if deleted[i] {
			if !mc.oos {
				mc.oos = true
				m.outOfSync++
			}
			return nil, &OutOfSyncError{
				Missed:   ch.missed(mc.next),
				Position: rtm.Position{Epoch: ch.epoch, Offset: mc.next},
				Head:     rtm.Position{Epoch: ch.epoch, Offset: ch.headOffset()},
			}
		}
		if len(out) > 0 && maxBytes > 0 && size+len(msg.data) > maxBytes {
			break
		}
		out = append(out, msg)
		size += len(msg.data)
	}
	if len(out) > 0 {
		mc.next = out[len(out)-1].off + 1
	}
	return out, nil
}

func (m *model) fastForward(mc *mCursor) uint64 {
	n := mc.ch.missed(mc.next)
	mc.next = max(mc.next, mc.ch.headOffset())
	mc.oos = false
	return n
}

// sweep applies retention to every channel, then forgets the empty,
// unused ones past their last message's (or, for those that cursors alone
// made, their last cursor's) TTL and grace, and at once those that the
// store limit drained.
func (m *model) sweep() {
	now := m.now()
	for _, ch := range m.chans {
		m.expire(ch, now)
		r := ch.ret
		if len(ch.live()) == 0 && ch.cursors == 0 &&
			(ch.drained || now > ch.touched+int64(r.TTL+r.Grace)) {
			m.forget(ch)
		}
	}
}

func (m *model) expire(ch *mChan, now int64) {
	r := ch.ret
	t1 := now - int64(r.TTL)
	t2 := t1 - int64(r.Grace)
	live := ch.live()
	hold := len(live)
	if r.HistoryCount > 0 {
		hold = 0
		n := r.HistoryCount
		for i := len(live) - 1; i >= 0; i-- {
			if n -= len(live[i].msgs); n <= 0 {
				hold = i
				break
			}
		}
	}
	for i, b := range live {
		if b.old {
			continue
		}
		if b.t >= t1 || i >= hold && b.t >= now-int64(r.HistoryAge) {
			break
		}
		b.old = true
	}
	for _, b := range live {
		if !b.old || b.t >= t2 {
			break
		}
		m.delete(b)
		m.expired++
	}
}

func (m *model) liveBlocks() int64 {
	var n int64
	for _, b := range m.order {
		if !b.deleted {
			n++
		}
	}
	return n
}

// randBlock returns a random live block, or nil.
func (m *model) randBlock(r *rand.Rand) *mBlock {
	var live []*mBlock
	for _, b := range m.order {
		if !b.deleted {
			live = append(live, b)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return live[r.IntN(len(live))]
}

package delivery

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/fossil"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The delta extension (rtm.SubscribeBody.Delta): a subscription that asks
// gets each message after its first as a fossil delta against the
// previous message it got, when that is smaller. A feed of large objects
// of which a few fields change then costs a few dozen bytes a message
// instead of kilobytes.
//
// A delta depends on the message, the one before it and the codec, not
// on the subscriber: the engine computes it once per message and channel
// (deltaLog), and the subscribers whose previous message was the same
// one copy it. The first message of a subscription, and the first after
// a gap (a fast_forward), go whole: the client has nothing to apply a
// delta to.

// deltaSlots is how many deltas a channel keeps: those of its last
// messages, in each codec its delta subscribers speak, and the odd one
// of a subscriber whose previous message was not the channel's previous
// (exclude_self skipped one).
const deltaSlots = 8

// maxDeltaBase bounds the messages that are diffed: the encoder's cost
// grows with them, and messages of this size are rare and differ more.
// Larger ones go whole.
const maxDeltaBase = 64 << 10

// encoders are the fossil encoders of the deltaLogs, which keep their
// hash tables between deltas: a channel's log borrows one for a delta
// rather than keeping its own table (up to 64 KiB for a base of
// maxDeltaBase) while its feed is quiet.
var encoders = sync.Pool{New: func() any { return new(fossil.Encoder) }}

// deltaCache holds the deltaLog of each channel that has delta
// subscribers, by store key; a channel's log goes when its last delta
// subscription closes.
type deltaCache struct {
	mu    sync.Mutex // guards chans and every deltaLog's refs
	chans map[string]*deltaLog
}

// deltaLog is a channel's last deltas. Its lock is held while a delta is
// computed, so that the subscribers of the channel who want the same one
// wait for it instead of computing it again; other channels go on.
type deltaLog struct {
	key  string
	refs int // delta subscriptions on the channel; guarded by deltaCache.mu

	mu    sync.Mutex // guards the slots and raw
	slots [deltaSlots]deltaSlot
	next  int       // the slot to reuse next
	raw   []byte    // scratch of the encoder
	one   [1][]byte // the messages of a tail: a slot's value
}

// deltaSlot is the delta of the message at off against the one at prev
// (of epoch), encoded as a message value of codec: value, or ok false
// when the message goes whole (the delta is not smaller, or the codec
// cannot carry it). tail, once written, is the rest of a data PDU at
// tailPos that carries value alone, after its subscription id
// (appendPDUTail); a slot made anew has the zero tailPos, which no
// data PDU is at (offsets start at 1).
type deltaSlot struct {
	epoch, prev, off uint64
	codec            int
	used, ok         bool
	value            []byte
	tailPos          rtm.Position
	tail             []byte
}

// join returns the deltaLog of the channel at key, counting one more
// subscription on it.
func (dc *deltaCache) join(key string) *deltaLog {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if dc.chans == nil {
		dc.chans = make(map[string]*deltaLog)
	}
	l := dc.chans[key]
	if l == nil {
		l = &deltaLog{key: key}
		dc.chans[key] = l
	}
	l.refs++
	return l
}

// leave uncounts a subscription of l, dropping l after the last.
func (dc *deltaCache) leave(l *deltaLog) {
	dc.mu.Lock()
	defer dc.mu.Unlock()
	if l.refs--; l.refs == 0 {
		delete(dc.chans, l.key)
	}
}

// deltaKey names a delta: of the message at off against the one at prev,
// both of epoch, in the codec at index codec.
type deltaKey struct {
	epoch, prev, off uint64
	codec            int
}

// appendDelta appends to dst the delta of the message of k, whose
// payload is data, against the message of k.prev, whose payload is
// prev, in enc's codec, as a message value; false, dst unchanged, when
// the message is to go whole. Only the first subscriber to want it
// computes it (slot); the others copy it.
func (l *deltaLog) appendDelta(dst []byte, k deltaKey, prev, data []byte, enc codec.DeltaEncoder) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.slot(k, prev, data, enc)
	if err != nil || !s.ok {
		return dst, false, err
	}
	return append(dst, s.value...), true, nil
}

// appendDeltaPDU appends to dst, the head of a data PDU (pduHead), the
// rest of the PDU at pos that carries the
// delta of k's message alone, as appendDelta makes it; false, dst
// unchanged, when the message is to go whole. The rest is the same for
// every subscriber of the channel: the first to want it at pos writes
// it, the others copy it, so that a delivery costs the edge neither a
// delta nor a position written again.
func (l *deltaLog) appendDeltaPDU(dst []byte, k deltaKey, prev, data []byte, enc codec.DeltaEncoder, pos rtm.Position) ([]byte, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.slot(k, prev, data, enc)
	if err != nil || !s.ok {
		return dst, false, err
	}
	if s.tailPos != pos {
		l.one[0] = s.value
		s.tail = appendPDUTail(s.tail[:0], enc, k.codec, pos, l.one[:])
		s.tailPos = pos
	}
	return append(dst, s.tail...), true, nil
}

// slot returns the slot of k, computed first if no subscriber did
// (compute). l.mu is held.
func (l *deltaLog) slot(k deltaKey, prev, data []byte, enc codec.DeltaEncoder) (*deltaSlot, error) {
	if s := l.find(k); s != nil {
		return s, nil
	}
	s := &l.slots[l.next]
	l.next = (l.next + 1) % deltaSlots
	*s = deltaSlot{epoch: k.epoch, prev: k.prev, off: k.off, codec: k.codec, used: true, value: s.value[:0], tail: s.tail[:0]}
	if err := l.compute(s, prev, data, enc); err != nil {
		s.used = false
		return nil, err
	}
	return s, nil
}

// compute fills s, new, with the delta of the message whose payload is
// data against the one whose payload is prev, if it is worth sending.
func (l *deltaLog) compute(s *deltaSlot, prev, data []byte, enc codec.DeltaEncoder) error {
	base, err := payload.In(prev, s.codec)
	if err != nil {
		return fmt.Errorf("delta base at %d: %w", s.prev, err)
	}
	target, err := payload.In(data, s.codec)
	if err != nil {
		return fmt.Errorf("delta target at %d: %w", s.off, err)
	}
	if len(base) > maxDeltaBase || len(target) > maxDeltaBase {
		return nil
	}
	fe := encoders.Get().(*fossil.Encoder)
	l.raw = fe.AppendCreate(l.raw[:0], base, target)
	encoders.Put(fe)
	s.value, s.ok = enc.AppendDelta(s.value, l.raw)
	// Not worth it unless smaller than the message itself.
	s.ok = s.ok && len(s.value) < len(target)
	return nil
}

// find returns the slot of k, or nil. The slot written last is looked at
// first: it is the one the subscribers after the first of a message
// want.
func (l *deltaLog) find(k deltaKey) *deltaSlot {
	last := &l.slots[(l.next+deltaSlots-1)%deltaSlots]
	if last.matches(k) {
		return last
	}
	for i := range l.slots {
		if s := &l.slots[i]; s.matches(k) {
			return s
		}
	}
	return nil
}

// matches reports whether s is the delta of k.
func (s *deltaSlot) matches(k deltaKey) bool {
	return s.used && s.off == k.off && s.prev == k.prev && s.epoch == k.epoch && s.codec == k.codec
}

// subDelta is what the writer of a delta subscription keeps: the
// channel's deltas and the last message it sent.
type subDelta struct {
	cache *deltaCache
	log   *deltaLog
	left  atomic.Bool // log was left (Subscription.Close)
	// prev is the payload (store.Frame.Data) of the last message sent,
	// at off of epoch; nil: none, the next message goes whole. It keeps
	// that message's block, at most one, alive.
	prev       []byte
	off, epoch uint64
	// head starts each of its delta PDUs of one message (pduHead), made
	// at the first; nil: not yet, or the codec's PDUs do not split.
	head []byte
}

// key names the previous message for sharedFrame.delta: 1 for none,
// 2+off for the one at off (0 is a subscription without deltas).
func (d *subDelta) key() uint64 {
	if d == nil {
		return 0
	}
	if d.prev == nil {
		return 1
	}
	return 2 + d.off
}

// gap forgets the previous message: the next goes whole.
func (d *subDelta) gap() {
	if d != nil {
		d.prev = nil
	}
}

// close leaves the channel's deltas, once.
func (d *subDelta) close() {
	if d != nil && d.left.CompareAndSwap(false, true) {
		d.cache.leave(d.log)
	}
}

// WantDeltas makes sub, not yet handed over, a delta subscription of the
// channel at key (the store's key: channels of two apps never share
// deltas).
func (e *Engine) WantDeltas(sub *Subscription, key string) {
	sub.delta = &subDelta{cache: &e.deltas, log: e.deltas.join(key)}
}

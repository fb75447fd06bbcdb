package store

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Errors returned by the store. Check them with errors.Is.
var (
	// ErrExpired: the position is before the channel's head, or of another
	// epoch (the channel's history was lost since).
	ErrExpired = errors.New("store: position expired")
	// ErrOutOfSync: a cursor's read point was deleted before it read it;
	// the error is an *OutOfSyncError.
	ErrOutOfSync = errors.New("store: cursor out of sync")
	// ErrOffsetOrder: AppendAt was given an offset not above the last one.
	ErrOffsetOrder = errors.New("store: offset not above the last one")
	// ErrFuture: the position is of the channel's epoch but beyond the
	// next offset it will assign, so it cannot be of this history: most
	// likely of another edge's, or of one lost in a restart. It is an
	// expired position too: errors.Is(ErrFuture, ErrExpired) holds.
	ErrFuture error = futureError{}
	// ErrClosed: the store or the cursor is closed.
	ErrClosed = errors.New("store: closed")
	// ErrTooLarge: the message cannot fit within the memory limits.
	ErrTooLarge = errors.New("store: message too large")
	// ErrChannelLimit: the append would have created a channel in a group
	// (Options.Group) that has as many live channels as the limit given
	// to Channel.AppendWithin; nothing was stored.
	ErrChannelLimit = errors.New("store: too many channels")
	// ErrOriginTooLong: an append's origin is longer than MaxOriginBytes.
	ErrOriginTooLong = errors.New("store: origin too long")
	// ErrNotStored: the log of record (edge/journal) did not store an
	// append and will not: appending it again is safe.
	ErrNotStored = errors.New("store: the log did not store the message")
	// ErrFateUnknown: the log of record did not answer an append in
	// time: it may have stored it (once) or not. The journal stores no
	// later append before it knows (edge/journal's fate.go).
	ErrFateUnknown = errors.New("store: the log did not answer in time; the message may have been stored")
)

// futureError is ErrFuture: a kind of ErrExpired.
type futureError struct{}

func (futureError) Error() string        { return "store: position beyond the next offset" }
func (futureError) Is(target error) bool { return target == ErrExpired }

// numShards splits the channel map so that creating and forgetting
// channels does not serialize the whole store.
const numShards = 64

// shard is one part of the channel map.
type shard struct {
	mu        sync.RWMutex        // guards m and forgotten; written by channel creation and forgetting
	m         map[string]*channel // live channels by name
	forgotten uint64              // appends of this shard's channels since forgotten
}

// Store holds the channels of one edge. Its methods are safe for concurrent
// use.
type Store struct {
	opts   Options
	shards [numShards]shard
	sw     sweeper
	fifo   fifo
	groups groups

	// created is OnCreate's function, or nil; loaded by every channel
	// creation.
	created atomic.Pointer[func(name string)]

	epochBase uint64        // store start in unix micros; immutable
	epochSeq  atomic.Uint64 // epoch counter; incremented by channel creation
	// applied is, in a replica (Options.Epoch or Partitions set), the
	// highest offset of each partition of the shared log the store has
	// applied: a channel created now holds the messages after its
	// partition's. Raised by the feeders through SetApplied. Nil in a
	// standalone store.
	applied  []atomic.Uint64
	coarse   atomic.Int64 // unix nanos, refreshed by the background goroutine when coarseOn
	coarseOn bool         // immutable: Append reads coarse instead of the clock
	// coarseUsed says coarse was read since the last refresh; coarseIdle
	// that the refreshes paused (coarse unread for coarseIdleTicks), and
	// coarseWake restarts them (see coarseClock).
	coarseUsed atomic.Bool
	coarseIdle atomic.Bool
	coarseWake chan struct{}

	nt notifier // wakes armed cursors for the appenders

	closed   atomic.Bool    // set once by Close; checked by Append and Subscribe
	stop     chan struct{}  // closed by Close to stop the background goroutines
	closeMu  sync.Mutex     // serializes Close
	wg       sync.WaitGroup // tracks the background goroutines; Close waits on them
	counters counters
}

// counters are the store-wide statistics, all atomic, written by whoever
// causes the event. memory is what StoreBytes bounds (see memory.go).
type counters struct {
	channels, blocks, bytes, memory atomic.Int64
	expired, evicted, outOfSync     atomic.Uint64
}

// Stats is a snapshot of the store's counters.
type Stats struct {
	Channels int64 // live channels
	Blocks   int64 // live blocks
	Bytes    int64 // capacity of the live blocks
	// Memory is what the store holds by its own account, the measure
	// StoreBytes bounds: the blocks' capacity plus a fixed estimate per
	// block and per channel (with its name) of the structures around them.
	Memory        int64
	Appends       uint64 // messages appended since the store started
	ExpiredBlocks uint64 // blocks deleted by expiry
	EvictedBlocks uint64 // blocks deleted by the memory limits
	OutOfSync     uint64 // times a cursor found its read point deleted
}

// New returns a store and starts its background goroutines: the notifier,
// which wakes waiting cursors, and the sweeper (which also refreshes the
// coarse clock) unless opts.SweepInterval is negative. A nil opts means the
// defaults. Close the store to stop them.
func New(opts *Options) *Store {
	s := &Store{opts: opts.normalize(), stop: make(chan struct{})}
	s.nt.ring = make(chan struct{}, 1)
	for i := range s.shards {
		s.shards[i].m = make(map[string]*channel)
	}
	s.sw.heap = make([]*channel, 0, 64)
	s.groups.m = make(map[string]*atomic.Int64)
	s.epochBase = uint64(s.clockNow() / 1e3)
	if p := s.opts.Partitions; p != nil {
		s.applied = make([]atomic.Uint64, len(p.Epochs))
	}
	s.coarseOn = s.opts.Clock == nil && s.opts.SweepInterval > 0 && s.opts.TimeResolution > 0
	s.coarse.Store(s.clockNow())
	s.coarseWake = make(chan struct{}, 1)
	s.wg.Go(s.notify)
	if s.opts.SweepInterval > 0 {
		s.wg.Go(s.sweepLoop)
	}
	return s
}

// Close stops the background goroutines and waits for them; cursors armed
// by then are still woken by the appends acknowledged before. Afterwards
// Append, AppendAt and Subscribe return ErrClosed; cursors and Read keep
// working on what is stored. Close is idempotent.
func (s *Store) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if !s.closed.Swap(true) {
		close(s.stop)
	}
	s.wg.Wait()
	return nil
}

// sweepLoop is the sweeper goroutine: it sweeps every SweepInterval and,
// with the real clock, refreshes the coarse clock.
func (s *Store) sweepLoop() {
	sweep := time.NewTicker(s.opts.SweepInterval)
	defer sweep.Stop()
	var c coarseClock
	if s.coarseOn {
		c.start(s.opts.TimeResolution)
		defer c.stop()
	}
	for {
		select {
		case <-s.stop:
			return
		case <-sweep.C:
			s.Sweep()
		case <-c.tick:
			s.raiseCoarse(time.Now().UnixNano())
			c.refreshed(s)
		case <-s.coarseWake:
			c.start(s.opts.TimeResolution)
		}
	}
}

// replica reports whether the store is a replica of a shared log
// (Options.Epoch or Partitions set).
func (s *Store) replica() bool { return s.applied != nil }

// newEpoch returns the epoch of a new channel and its partition: the
// fixed one of a replica's partition, else one unique to this
// incarnation of the channel.
func (s *Store) newEpoch(name string) (epoch uint64, part int) {
	if p := s.opts.Partitions; p != nil {
		part = p.of(name)
		return p.Epochs[part], part
	}
	return s.epochBase + s.epochSeq.Add(1), 0
}

// SetApplied tells a replica (Options.Epoch or Partitions set) that every
// message of partition part of the shared log up to offset has been
// appended through AppendAt: a channel of that partition created from
// now on holds the messages after offset, and positions before that are
// not in it (Subscribe and Read say ErrExpired, and the caller reads
// them from the log). The partition's feeder calls it after each
// append, and once before the first with the offset it starts after.
// Offsets only rise: a lower one is ignored.
func (s *Store) SetApplied(part int, offset uint64) {
	a := &s.applied[part]
	for {
		old := a.Load()
		if offset <= old || a.CompareAndSwap(old, offset) {
			return
		}
	}
}

// Applied returns the highest offset passed to SetApplied for part (0
// in a standalone store).
func (s *Store) Applied(part int) uint64 {
	if s.applied == nil {
		return 0
	}
	return s.applied[part].Load()
}

// clockNow reads the clock exactly, in unix nanos.
func (s *Store) clockNow() int64 {
	if s.opts.Clock == nil {
		return time.Now().UnixNano()
	}
	return s.opts.Clock.Now().UnixNano()
}

// Now reads the store's clock, in unix nanoseconds like Frame.Time, so
// that a caller can tell how long ago a message was stored.
func (s *Store) Now() int64 { return s.clockNow() }

// Stamp returns the time a message appended now is given (its
// Frame.Time): the coarse clock, which lags Now by up to the time
// resolution, when it runs. A caller that compares Frame.Time with a time
// of its own, to tell messages stored before from those stored after,
// takes it from here.
func (s *Store) Stamp() int64 { return s.stampNow() }

// shardIndex picks a shard from the name's length and its first and last
// bytes: a few loads and one multiply, cheaper than a full hash on the
// append path, and channel names usually differ at their ends.
func shardIndex(name string) int {
	n := len(name)
	var h uint64
	switch {
	case n >= 8:
		h = load64(name) ^ load64(name[n-8:])*0xff51afd7ed558ccd
	case n >= 4:
		h = uint64(load32(name)) | uint64(load32(name[n-4:]))<<32
	case n > 0:
		h = uint64(name[0]) | uint64(name[n/2])<<8 | uint64(name[n-1])<<16
	}
	h = (h ^ uint64(n)) * 0x9e3779b97f4a7c15
	return int(h >> (64 - 6)) // numShards == 1<<6
}

// load64 reads the first eight bytes of s, little endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// load32 reads the first four bytes of s, little endian.
func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// lookup returns the live channel named name, or nil.
func (s *Store) lookup(name string) *channel {
	sh := &s.shards[shardIndex(name)]
	sh.mu.RLock()
	ch := sh.m[name]
	sh.mu.RUnlock()
	return ch
}

// obtain returns the channel named name, creating it if missing. The
// caller must still check ch.dead under ch.mu and retry if set.
func (s *Store) obtain(name string) *channel {
	ch, _ := s.obtainWithin(name, 0)
	return ch
}

// obtainWithin is obtain that, with maxChannels > 0, creates the channel
// only if its group has fewer live channels than that (ErrChannelLimit
// otherwise). The count is raised under the shard's lock, by compare and
// swap, so racing creators never take the group past the limit.
func (s *Store) obtainWithin(name string, maxChannels int) (*channel, error) {
	sh := &s.shards[shardIndex(name)]
	sh.mu.RLock()
	ch := sh.m[name]
	sh.mu.RUnlock()
	if ch != nil {
		return ch, nil
	}
	sh.mu.Lock()
	if ch = sh.m[name]; ch != nil {
		sh.mu.Unlock()
		return ch, nil
	}
	g := s.groups.of(s.group(name))
	if !reserve(g, maxChannels) {
		sh.mu.Unlock()
		return nil, fmt.Errorf("store: create channel %q: at most %d in its group: %w", name, maxChannels, ErrChannelLimit)
	}
	ch = s.newChannel(strings.Clone(name))
	ch.group = g
	// The map's key is the channel's own copy of the name: the caller's
	// string (often built for this call) is not kept as well.
	sh.m[ch.name] = ch
	s.counters.channels.Add(1)
	s.counters.memory.Add(channelCost(ch.name))
	sh.mu.Unlock()
	if f := s.created.Load(); f != nil {
		(*f)(ch.name) // outside the lock: it may subscribe to the channel
	}
	return ch, nil
}

// OnCreate sets a function the store calls with the name of each channel
// it creates (by an append or a subscribe), once the channel is in the
// map and outside the store's locks, so f may subscribe to it; f runs on
// the creator's goroutine, before its append or subscribe proceeds, and
// must be quick. It is how a prefix subscription learns of the channels
// it covers without a scan per publish. Nil removes it.
func (s *Store) OnCreate(f func(name string)) {
	if f == nil {
		s.created.Store(nil)
		return
	}
	s.created.Store(&f)
}

// forget removes ch from the map if it is still empty, unused and past its
// forget deadline at now; otherwise it reschedules it. Race-free against
// Append and Subscribe: they lock ch.mu and retry on ch.dead.
func (s *Store) forget(ch *channel, now int64) {
	sh := &s.shards[shardIndex(ch.name)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dead {
		return
	}
	if d, ok := ch.nextDeadline(); ok && ch.empty() && d <= now {
		ch.dead = true
		s.sw.remove(ch)
		if sh.m[ch.name] == ch {
			delete(sh.m, ch.name)
		}
		s.counters.channels.Add(-1)
		s.counters.memory.Add(-channelCost(ch.name))
		ch.group.Add(-1)
		sh.forgotten += ch.appends
		return
	}
	ch.schedule()
}

// Next returns the position the next message appended to channel will get,
// creating the channel (and so fixing its epoch) if missing.
func (s *Store) Next(channel string) rtm.Position {
	for {
		ch := s.obtain(channel)
		ch.mu.Lock()
		if ch.dead {
			ch.mu.Unlock()
			continue
		}
		p := rtm.Position{Epoch: ch.epoch, Offset: ch.last + 1}
		ch.mu.Unlock()
		return p
	}
}

// Has reports whether channel is live, under the shard's read lock alone
// (not the channel's writer lock, which its appender holds): a check on
// every publish of a replica, whose feeder appends meanwhile.
func (s *Store) Has(channel string) bool { return s.lookup(channel) != nil }

// Peek returns the position the next message appended to channel will
// get, like Next, but only if the channel exists: a reader asking about a
// channel must not create it (ok is false then).
func (s *Store) Peek(channel string) (p rtm.Position, ok bool) {
	ch := s.lookup(channel)
	if ch == nil {
		return p, false
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.dead {
		return p, false
	}
	return rtm.Position{Epoch: ch.epoch, Offset: ch.last + 1}, true
}

// MovedOn reports whether the store holds a message of channel after
// offset, having held the channel since before offset: a replica's
// channel created after offset starts after everything applied then, so
// its newest offset says nothing of what came after offset in the log.
func (s *Store) MovedOn(channel string, offset uint64) bool {
	ch := s.lookup(channel)
	if ch == nil {
		return false
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return !ch.dead && ch.base < offset && ch.last > offset
}

// Stats returns the store's counters. It visits every channel (to sum
// their append counts without a shared counter on the append path), so it
// is meant for metrics scrapes, not hot paths.
func (s *Store) Stats() Stats {
	st := Stats{
		Channels:      s.counters.channels.Load(),
		Blocks:        s.counters.blocks.Load(),
		Bytes:         s.counters.bytes.Load(),
		Memory:        s.counters.memory.Load(),
		ExpiredBlocks: s.counters.expired.Load(),
		EvictedBlocks: s.counters.evicted.Load(),
		OutOfSync:     s.counters.outOfSync.Load(),
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		st.Appends += sh.forgotten
		for _, ch := range sh.m {
			ch.mu.Lock()
			st.Appends += ch.appends
			ch.mu.Unlock()
		}
		sh.mu.RUnlock()
	}
	return st
}

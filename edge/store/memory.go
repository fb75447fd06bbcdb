package store

import (
	"strings"
	"sync"
	"sync/atomic"
)

// What the store counts against StoreBytes beyond the blocks' capacity:
// the structures it keeps around them, as a fixed estimate, so that a
// million channels of one small message each cost what they really do
// and not only their bytes of messages. The figures are the heap a
// channel and a block take on 64-bit platforms (TestMemoryEstimates
// measures them), rounded up.
const (
	// channelOverhead is a live channel without its name: its struct
	// (256 bytes), its queue snapshot, the empty anchor block at its tail
	// when it has no block, its entries in the shard map and the
	// sweeper's heap, and those's spare room: about 470 bytes measured.
	// Its name is counted on top, byte for byte.
	channelOverhead = 512
	// blockOverhead is a block's struct (112 bytes) and its place in the
	// queue snapshot, beyond its capacity.
	blockOverhead = 128
)

// channelCost is what a live channel named name costs the store.
func channelCost(name string) int64 { return channelOverhead + int64(len(name)) }

// blockCost is what a live block of capacity size costs the store.
func blockCost(size int) int64 { return int64(size) + blockOverhead }

// groups counts the live channels of each group (Options.Group), so that
// a caller can bound the channels of, say, one app among several sharing
// the store. Counted when a channel is created and forgotten, never on
// the append path.
type groups struct {
	mu sync.Mutex               // guards m; a leaf lock, taken under shard.mu
	m  map[string]*atomic.Int64 // live channels by group; entries are never removed
}

// of returns the counter of group, creating it.
func (gs *groups) of(group string) *atomic.Int64 {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	g := gs.m[group]
	if g == nil {
		g = new(atomic.Int64)
		gs.m[strings.Clone(group)] = g
	}
	return g
}

// count returns the live channels of group.
func (gs *groups) count(group string) int64 {
	gs.mu.Lock()
	g := gs.m[group]
	gs.mu.Unlock()
	if g == nil {
		return 0
	}
	return g.Load()
}

// reserve counts one more channel in g unless that would take it past
// maxChannels (> 0; otherwise there is no limit); it reports whether it
// did. The compare and swap makes the check and the count one step, so
// creators racing in different shards never overshoot the limit.
func reserve(g *atomic.Int64, maxChannels int) bool {
	if maxChannels <= 0 {
		g.Add(1)
		return true
	}
	for {
		n := g.Load()
		if n >= int64(maxChannels) {
			return false
		}
		if g.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// group returns the group of the channel named name: Options.Group's
// answer, or "" (one group for all) without it.
func (s *Store) group(name string) string {
	if s.opts.Group == nil {
		return ""
	}
	return s.opts.Group(name)
}

// Channels returns the number of live channels in group (see
// Options.Group; without it every channel is in the group "").
func (s *Store) Channels(group string) int64 { return s.groups.count(group) }

package server

import (
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
)

// Subscribers of one statement on one channel share what the view makes
// of each message: the first of their writers to reach a message
// evaluates it (and encodes a projection for its codec) and leaves the
// result in the statement's viewShare; the others, which read the same
// messages at about the same time, take it from there. So a view costs
// the edge once per message and codec, not once per subscriber, and its
// thousand subscribers about what a thousand of the raw channel do. A
// writer far behind (history, a slow reader) misses and evaluates for
// itself, which is never wrong: a result is keyed by the message's offset
// and append time, and immutable once left.

// viewShareSlots is how many recent messages a share remembers (their
// writers read batches of at most 64 near the channel's head).
const viewShareSlots = 256

// viewShare holds a statement's recent results. Its slots (about 6 KiB)
// are made when a second subscription uses the statement: one subscriber
// alone has nobody to share with.
type viewShare struct {
	key   string // the store key, NUL, the statement
	refs  int    // subscriptions using it; guarded by viewShares.mu
	slots atomic.Pointer[[viewShareSlots][payload.NumCodecs]atomic.Pointer[viewResult]]
}

// viewResult is the view's result for one message and codec. It is never
// changed once stored, so that readers take it without a lock.
type viewResult struct {
	offset uint64
	time   int64
	msg    []byte // the message as the view makes it, for the codec
	keep   bool   // false: the view drops the message
	// over: the view gave up on the message (view.ErrBudget), so every
	// subscription of the statement ends there without trying again.
	over bool
}

// get returns the result left for frame f and codec ci, or nil.
func (sh *viewShare) get(f *store.Frame, ci int) *viewResult {
	slots := sh.slots.Load()
	if slots == nil {
		return nil
	}
	r := slots[f.Offset%viewShareSlots][ci].Load()
	if r == nil || r.offset != f.Offset || r.time != f.Time {
		return nil
	}
	return r
}

// shared reports whether another subscription uses the statement, so
// that a result is worth leaving (and copying for it).
func (sh *viewShare) shared() bool { return sh.slots.Load() != nil }

// put leaves r, the result for frame f and codec ci, which it marks as
// f's; neither r nor its msg may change afterwards.
func (sh *viewShare) put(f *store.Frame, ci int, r *viewResult) {
	if slots := sh.slots.Load(); slots != nil {
		r.offset, r.time = f.Offset, f.Time
		slots[f.Offset%viewShareSlots][ci].Store(r)
	}
}

// viewShares are an edge's shares, by key.
type viewShares struct {
	mu     sync.Mutex // guards shares and each share's refs
	shares map[string]*viewShare
}

// acquire returns the share of key, made if it is the first.
func (vs *viewShares) acquire(key string) *viewShare {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	sh := vs.shares[key]
	if sh == nil {
		if vs.shares == nil {
			vs.shares = make(map[string]*viewShare)
		}
		sh = &viewShare{key: key}
		vs.shares[key] = sh
	}
	if sh.refs++; sh.refs == 2 {
		sh.slots.Store(new([viewShareSlots][payload.NumCodecs]atomic.Pointer[viewResult]))
	}
	return sh
}

// release gives sh back; the last one forgets it.
func (vs *viewShares) release(sh *viewShare) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if sh.refs--; sh.refs == 0 {
		delete(vs.shares, sh.key)
	}
}

// len is how many shares the edge holds, for tests.
func (vs *viewShares) len() int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return len(vs.shares)
}

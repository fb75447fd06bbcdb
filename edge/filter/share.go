package filter

import (
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
)

// Subscribers of one statement on one channel share what the view makes
// of each message: the first of their writers to reach a message
// evaluates it (and encodes a projection for its codec) and leaves the
// result in the statement's share; the others, which read the same
// messages at about the same time, take it from there. So a view costs
// the edge once per message and codec, not once per subscriber, and its
// thousand subscribers about what a thousand of the raw channel do. A
// writer far behind (history, a slow reader) misses and evaluates for
// itself, which is never wrong: a result is keyed by the message's offset
// and append time, and immutable once left.

// shareSlots is how many recent messages a share remembers (their
// writers read batches of at most 64 near the channel's head).
const shareSlots = 256

// share holds a statement's recent results. Its slots (about 6 KiB) are
// made when a second subscription uses the statement: one subscriber
// alone has nobody to share with.
type share struct {
	key   string // the store key, NUL, the statement
	refs  int    // subscriptions using it; guarded by Shares.mu
	slots atomic.Pointer[[shareSlots][payload.NumCodecs]atomic.Pointer[result]]
}

// result is the view's result for one message and codec. It is never
// changed once stored, so that readers take it without a lock.
type result struct {
	offset uint64
	time   int64
	msg    []byte // the message as the view makes it, for the codec
	keep   bool   // false: the view drops the message
	// over: the view gave up on the message (view.ErrBudget), so every
	// subscription of the statement ends there without trying again.
	over bool
}

// get returns the result left for frame f and codec ci, or nil.
func (sh *share) get(f *store.Frame, ci int) *result {
	slots := sh.slots.Load()
	if slots == nil {
		return nil
	}
	r := slots[f.Offset%shareSlots][ci].Load()
	if r == nil || r.offset != f.Offset || r.time != f.Time {
		return nil
	}
	return r
}

// shared reports whether another subscription uses the statement, so
// that a result is worth leaving (and copying for it).
func (sh *share) shared() bool { return sh.slots.Load() != nil }

// put leaves r, the result for frame f and codec ci, which it marks as
// f's; neither r nor its msg may change afterwards.
func (sh *share) put(f *store.Frame, ci int, r *result) {
	if slots := sh.slots.Load(); slots != nil {
		r.offset, r.time = f.Offset, f.Time
		slots[f.Offset%shareSlots][ci].Store(r)
	}
}

// Shares are an edge's shared view results, by channel and statement.
// The zero value is ready to use.
type Shares struct {
	mu     sync.Mutex // guards shares and each share's refs
	shares map[string]*share
}

// acquire returns the share of key, made if it is the first.
func (vs *Shares) acquire(key string) *share {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	sh := vs.shares[key]
	if sh == nil {
		if vs.shares == nil {
			vs.shares = make(map[string]*share)
		}
		sh = &share{key: key}
		vs.shares[key] = sh
	}
	if sh.refs++; sh.refs == 2 {
		sh.slots.Store(new([shareSlots][payload.NumCodecs]atomic.Pointer[result]))
	}
	return sh
}

// release gives sh back; the last one forgets it.
func (vs *Shares) release(sh *share) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if sh.refs--; sh.refs == 0 {
		delete(vs.shares, sh.key)
	}
}

// Len is how many statements' results the edge shares, for tests.
func (vs *Shares) Len() int {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return len(vs.shares)
}

package journal

import (
	"container/heap"
	"context"
	"fmt"
	"time"
)

// waiter is a publish acknowledged by JetStream whose message the store
// does not hold yet.
type waiter struct {
	seq      uint64
	id       uint64 // the hash of the publish's Msg-Id: the feed's owners say whether the replica holds it at seq
	check    uint64 // the stream checks started before its acknowledgment
	deadline time.Time
	done     func(seq uint64, err error)
	// subj and data are the message, which a sole writer appends itself
	// (sole.go).
	subj   string
	data   []byte
	origin string
	// req, when set, is the publish's request, which call recycles
	// (req.go): data is its buffer.
	req *pubReq
	// purge says the message is a purge marker (the interest feed backs
	// it with the channel's purge chain, follow.go).
	purge bool
}

// call completes the publish: stored at seq. The waiter is done then:
// its request, if it has one, goes back to the pool.
func (w waiter) call() {
	w.done(w.seq, nil)
	if w.req != nil {
		w.req.recycle()
	}
}

// whenApplied calls w.done(w.seq, nil) once the store holds the publish
// with Msg-Id hash w.id at w.seq (at once if it does), or at w.deadline (the
// publish's own) if the feed lags, provided that the stream is the one
// the journal opened (verify.go); else done gets an error.
func (f *feed) whenApplied(w waiter) {
	seq := w.seq
	f.mu.Lock()
	w.check = f.checks
	switch {
	case f.closed:
		f.mu.Unlock()
		f.finishClosed(w, f.j.Lost())
	case f.applied >= seq:
		v := f.settleLocked(w)
		f.mu.Unlock()
		f.settle(w, v)
	default:
		f.waiters.push(w)
		f.mu.Unlock()
	}
}

// release records seq as applied and calls the waiters it satisfies. The
// feed applies one message at a time, and an acknowledgment is mostly
// there before its message: release calls one waiter at a time, under
// no lock, with no list to allocate.
func (f *feed) release(seq, id uint64) {
	f.mu.Lock()
	f.owners[seq%ownerRing] = owner{seq: seq, id: id}
	f.applied = max(f.applied, seq)
	for len(f.waiters) > 0 && f.waiters[0].seq <= f.applied {
		w := f.waiters.pop()
		v := f.settleLocked(w)
		f.mu.Unlock()
		f.settle(w, v)
		f.mu.Lock()
	}
	f.mu.Unlock()
}

// expireWaiters completes the publishes whose deadline passed before
// the feed brought their message, or before a stream check vouched for
// the one it brought. JetStream stored them, but an ok says this edge's
// store holds the message (a read here sees it): one the feed has not
// brought fails as its fate unknown (it was stored; before, a stream
// check was enough for an ok, and an ack across a failover came while
// the replica lagged). One the replica holds at its sequence (or any,
// where the journal feeds no store) is stored if a stream check since
// found the stream unchanged; else it fails as unavailable.
func (f *feed) expireWaiters(now time.Time) {
	f.mu.Lock()
	if len(f.waiters)+len(f.unverified) == 0 || !now.After(f.earliestDeadlineLocked()) {
		f.mu.Unlock()
		return
	}
	// Look at the stream before judging (a journal without a feed has no
	// watchdog that looks): this is the rare path of a lagging feed.
	f.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	f.j.checkEpoch(ctx)
	cancel()
	f.mu.Lock()
	var held, lagged []waiter
	held, f.unverified = takeDue(held, f.unverified, now)
	lagged, f.waiters = takeDue(lagged, f.waiters, now)
	if !f.fed.Load() {
		held, lagged = append(held, lagged...), nil
	}
	heap.Init(&f.waiters)
	confirmed := f.confirmed
	f.mu.Unlock()
	for _, w := range held {
		if confirmed > w.check {
			w.call()
		} else {
			f.j.counters.failed.Add(1)
			w.done(0, fmt.Errorf("%w: no look at the stream confirmed its acknowledgment in time", ErrUnavailable))
		}
	}
	for _, w := range lagged {
		f.j.counters.failed.Add(1)
		w.done(0, fmt.Errorf("%w: %w: JetStream stored it at %d, but this edge's store had not applied it by the publish's deadline",
			ErrUnavailable, ErrFateUnknown, w.seq))
	}
}

// takeDue moves the waiters of ws past their deadline to due, keeping
// the others in ws's array.
func takeDue(due, ws []waiter, now time.Time) ([]waiter, []waiter) {
	kept := ws[:0]
	for _, w := range ws {
		if now.After(w.deadline) {
			due = append(due, w)
		} else {
			kept = append(kept, w)
		}
	}
	clear(ws[len(kept):])
	return due, kept
}

// earliestDeadlineLocked returns the waiters' earliest deadline. f.mu.
func (f *feed) earliestDeadlineLocked() time.Time {
	var d time.Time
	for _, ws := range [][]waiter{f.waiters, f.unverified} {
		for _, w := range ws {
			if d.IsZero() || w.deadline.Before(d) {
				d = w.deadline
			}
		}
	}
	return d
}

// finishClosed completes w after the feed stopped: failed with err (the
// stream it was stored in is lost), else stored if a stream check
// confirmed its acknowledgment, else unavailable (it may be stored).
func (f *feed) finishClosed(w waiter, err error) {
	f.mu.Lock()
	confirmed := f.confirmed > w.check
	f.mu.Unlock()
	switch {
	case err != nil:
		w.done(0, unavailable(err))
	case confirmed:
		w.call()
	default:
		w.done(0, fmt.Errorf("%w: journal closed", ErrUnavailable))
	}
}

// waitHeap is a min-heap of waiters by sequence. push and pop are the
// typed forms of heap.Push and heap.Pop: no waiter boxed into an any.
type waitHeap []waiter

func (h *waitHeap) push(w waiter) {
	*h = append(*h, w)
	heap.Fix(h, len(*h)-1)
}

func (h *waitHeap) pop() waiter {
	old := *h
	w := old[0]
	n := len(old) - 1
	old[0] = old[n]
	old[n] = waiter{}
	*h = old[:n]
	if n > 0 {
		heap.Fix(h, 0)
	}
	return w
}

func (h waitHeap) Len() int           { return len(h) }
func (h waitHeap) Less(i, k int) bool { return h[i].seq < h[k].seq }
func (h waitHeap) Swap(i, k int)      { h[i], h[k] = h[k], h[i] }
func (h *waitHeap) Push(x any)        { *h = append(*h, x.(waiter)) }
func (h *waitHeap) Pop() any {
	old := *h
	w := old[len(old)-1]
	*h = old[:len(old)-1]
	return w
}

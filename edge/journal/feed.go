package journal

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/store"
)

// feed appends the stream's messages to the edge's store, in stream
// order, through one ordered consumer (which nats.go recreates after the
// last sequence it delivered when the connection drops: no gap).
type feed struct {
	j  *Journal
	st *store.Store
	cc jetstream.ConsumeContext
	// handles caches store handles by subject; the consumer's goroutine
	// alone uses it.
	handles map[string]*store.Channel
	// target is the stream's last sequence when the feed started;
	// caughtUp is set once the feed has applied it (readiness).
	target   uint64
	caughtUp atomic.Bool
	caught   chan struct{} // closed once caughtUp is set
	once     sync.Once

	mu      sync.Mutex // guards applied, waiters and closed; a leaf lock
	applied uint64
	waiters waitHeap
	closed  bool
}

// feedHeartbeat is how often JetStream tells an idle feed it is alive.
// Its consumer lives on one node; when that node goes, two missed
// heartbeats make nats.go recreate it elsewhere, from the last sequence
// delivered: the feed (and the acknowledgments waiting for it) stalls
// that long, not the 10 s of the default.
const feedHeartbeat = time.Second

// maxHandles bounds the feed's handle cache.
const maxHandles = 1 << 16

// Start makes the journal feed st: it replays the last Options.Replay of
// the stream (to rebuild the tail after a restart), then follows it. st
// must be a replica with the journal's epoch (store.Options.Epoch).
func (j *Journal) Start(ctx context.Context, st *store.Store) error {
	f := &j.feed
	f.j, f.st, f.handles = j, st, make(map[string]*store.Channel)
	var info *jetstream.StreamInfo
	var msgs []store.Frame
	since := time.Now().Add(-j.opts.Replay)
	err := j.retry(ctx, "find where to replay from", func(ctx context.Context) (err error) {
		if info, err = j.stream.Info(ctx); err != nil {
			return err
		}
		msgs, _, err = j.get(ctx, &getRequest{StartTime: &since, Batch: 1})
		return err
	})
	if err != nil {
		return err
	}
	from := info.State.LastSeq + 1
	if len(msgs) > 0 {
		from = msgs[0].Offset
	}
	f.target = info.State.LastSeq
	f.applied = from - 1
	st.SetApplied(from - 1)
	if f.target < from {
		f.markCaughtUp()
	}
	var cons jetstream.Consumer
	err = j.retry(ctx, "create the feed's consumer", func(actx context.Context) (err error) {
		cons, err = j.stream.OrderedConsumer(actx, jetstream.OrderedConsumerConfig{
			DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
			OptStartSeq:   from,
		})
		return err
	})
	if err != nil {
		return err
	}
	f.cc, err = cons.Consume(f.onMsg, jetstream.PullHeartbeat(feedHeartbeat),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			j.log.Warn("journal feed: recovering", "err", err)
		}))
	if err != nil {
		return fmt.Errorf("journal: start the feed: %w", err)
	}
	j.log.Info("journal feed started", "stream", j.opts.Stream, "epoch", j.epoch,
		"from", from, "last", info.State.LastSeq)
	return nil
}

// onMsg applies one message of the stream.
func (f *feed) onMsg(m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		f.j.log.Error("journal: message without metadata", "err", err)
		return
	}
	seq := md.Sequence.Stream
	subj := m.Subject()
	h := f.handles[subj]
	if h == nil {
		key, ok := keyOf(subj)
		if !ok {
			f.j.log.Warn("journal: message on a subject that is no channel", "subject", subj, "seq", seq)
		} else {
			if len(f.handles) >= maxHandles {
				clear(f.handles)
			}
			h = f.st.Channel(key)
			f.handles[subj] = h
		}
	}
	if h != nil {
		_, err := h.AppendAt(seq, md.Timestamp, m.Data())
		switch {
		case err == nil:
			f.j.counters.applied.Add(1)
		case errors.Is(err, store.ErrOffsetOrder):
			// Delivered again after the consumer was recreated: stored.
		case errors.Is(err, store.ErrClosed):
			// The edge is shutting down.
		default:
			f.j.log.Error("journal: cannot store a message", "subject", subj, "seq", seq, "err", err)
		}
	}
	f.st.SetApplied(seq)
	if seq >= f.target || md.NumPending == 0 {
		f.markCaughtUp()
	}
	f.release(seq)
}

// markCaughtUp records that the feed has reached the stream's end as it
// was at the start.
func (f *feed) markCaughtUp() {
	f.once.Do(func() {
		f.caughtUp.Store(true)
		close(f.caught)
	})
}

// CaughtUp is closed once the feed has brought the store up to the stream
// as it was when Start was called: before that, the store lacks recent
// messages a client would expect (the edge serves clients after it).
func (j *Journal) CaughtUp() <-chan struct{} { return j.feed.caught }

// waiter is a publish acknowledged by JetStream whose message the store
// does not hold yet.
type waiter struct {
	seq      uint64
	deadline time.Time
	fn       func()
}

// whenApplied calls fn once the store holds the message at seq (at once
// if it does), or at deadline (the publish's own) if the feed lags.
func (f *feed) whenApplied(seq uint64, deadline time.Time, fn func()) {
	f.mu.Lock()
	if f.applied >= seq || f.closed {
		f.mu.Unlock()
		fn()
		return
	}
	heap.Push(&f.waiters, waiter{seq: seq, deadline: deadline, fn: fn})
	f.mu.Unlock()
}

// release records seq as applied and calls the waiters it satisfies.
func (f *feed) release(seq uint64) {
	f.mu.Lock()
	f.applied = max(f.applied, seq)
	var ready []func()
	for len(f.waiters) > 0 && f.waiters[0].seq <= f.applied {
		ready = append(ready, heap.Pop(&f.waiters).(waiter).fn)
	}
	f.mu.Unlock()
	for _, fn := range ready {
		fn()
	}
}

// expireWaiters acknowledges the publishes whose message the feed has not
// brought within the publish timeout: JetStream stored them, so the ok is
// true; only this edge's read-your-writes is lost while its feed lags.
func (f *feed) expireWaiters(now time.Time) {
	f.mu.Lock()
	if len(f.waiters) == 0 || !now.After(f.earliestDeadlineLocked()) {
		f.mu.Unlock()
		return
	}
	var due []func()
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if now.After(w.deadline) {
			due = append(due, w.fn)
		} else {
			kept = append(kept, w)
		}
	}
	f.waiters = kept
	heap.Init(&f.waiters)
	f.mu.Unlock()
	for _, fn := range due {
		fn()
	}
}

// earliestDeadlineLocked returns the waiters' earliest deadline. f.mu.
func (f *feed) earliestDeadlineLocked() time.Time {
	d := f.waiters[0].deadline
	for _, w := range f.waiters[1:] {
		if w.deadline.Before(d) {
			d = w.deadline
		}
	}
	return d
}

// close stops the consumer and acknowledges the waiting publishes (they
// are stored).
func (f *feed) close() {
	if f.cc != nil {
		f.cc.Stop()
	}
	f.mu.Lock()
	f.closed = true
	ws := f.waiters
	f.waiters = nil
	f.mu.Unlock()
	for _, w := range ws {
		w.fn()
	}
}

// Ready reports why the journal cannot serve yet, or nil: NATS is
// unreachable, or the feed has not caught up with the stream as it was
// when the edge started.
func (j *Journal) Ready() error {
	if !j.nc.IsConnected() {
		return errors.New("journal: not connected to NATS")
	}
	if !j.feed.caughtUp.Load() {
		return errors.New("journal: replaying the stream")
	}
	return nil
}

// waitHeap is a min-heap of waiters by sequence.
type waitHeap []waiter

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

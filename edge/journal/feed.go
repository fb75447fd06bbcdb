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
// last sequence it delivered when the connection drops: no gap). A
// watchdog replaces the consumer when it stops bringing messages the
// stream has (its recreation can stall after a node's loss).
type feed struct {
	j  *Journal
	st *store.Store

	// applyMu serializes applying messages (an old consumer's last ones
	// may race a new one's) and guards the fields below it.
	applyMu sync.Mutex
	cc      jetstream.ConsumeContext // the current consumer's
	gen     int                      // the current consumer's generation; older ones' messages are dropped
	// verified names the consumer (nats.go's ordered consumer renames
	// each recreation) a stream check has vouched for: see verify.go.
	verified string
	// handles caches store handles by subject.
	handles map[string]*store.Channel
	// progress is when the feed last applied a message (or started), in
	// unix nanos; written by apply, read by the watchdog.
	progress atomic.Int64
	// target is the stream's last sequence when the feed started; caught
	// is closed once the feed has applied it (readiness).
	target uint64
	caught chan struct{}
	once   sync.Once

	// kick asks the watchdog for a stream check now (buffered, 1).
	kick chan struct{}

	mu      sync.Mutex // guards the fields below; a leaf lock
	applied uint64
	waiters waitHeap
	closed  bool
	// owners[seq%ownerRing] is which publish of this journal the feed
	// applied at seq (verify.go); unverified are the waiters whose
	// sequence it applied but cannot vouch for, until a stream check
	// that started after their acknowledgment (checks counts those
	// started, confirmed is the last that found the stream unchanged).
	owners     []owner
	unverified []waiter
	checks     uint64
	confirmed  uint64
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
	f.progress.Store(time.Now().UnixNano())
	if err := j.retry(ctx, "start the feed", func(actx context.Context) error { return f.consume(actx, from) }); err != nil {
		return err
	}
	j.wg.Go(f.watch)
	j.log.Info("journal feed started", "stream", j.opts.Stream, "epoch", j.epoch,
		"from", from, "last", info.State.LastSeq)
	return nil
}

// consume starts a new consumer at from, replacing the current one.
func (f *feed) consume(ctx context.Context, from uint64) error {
	cons, err := f.j.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   from,
	})
	if err != nil {
		return err
	}
	f.applyMu.Lock()
	f.gen++
	gen, old := f.gen, f.cc
	f.applyMu.Unlock()
	if old != nil {
		old.Stop()
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { f.apply(gen, m) }, jetstream.PullHeartbeat(feedHeartbeat),
		jetstream.ConsumeErrHandler(func(_ jetstream.ConsumeContext, err error) {
			// The consumer is being recreated, perhaps because the
			// stream was: look at it now, not at the next tick.
			f.j.log.Warn("journal feed: recovering", "err", err)
			f.kickCheck()
		}))
	if err != nil {
		return fmt.Errorf("journal: start the feed: %w", err)
	}
	f.applyMu.Lock()
	f.cc = cc
	f.applyMu.Unlock()
	return nil
}

// Watchdog timing: the feed is stuck when the stream (or an
// acknowledgment) shows a sequence it has not applied and it applied
// nothing for feedStall; the stream's last sequence is asked every
// watchEvery.
const (
	feedStall  = 4 * time.Second
	watchEvery = time.Second
)

// watch replaces a stuck consumer with a new one after the last applied
// sequence, until the journal closes.
func (f *feed) watch() {
	tick := time.NewTicker(f.j.opts.watchEvery)
	defer tick.Stop()
	for {
		select {
		case <-f.j.stop:
			return
		case <-tick.C:
		case <-f.kick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info := f.j.checkEpoch(ctx)
		if f.j.Lost() != nil {
			cancel()
			return
		}
		if time.Since(time.Unix(0, f.progress.Load())) < feedStall {
			cancel()
			continue
		}
		known := f.knownSeq(info)
		applied := f.st.Applied()
		if known > applied {
			f.j.log.Warn("journal feed: stuck behind the stream; starting a new consumer",
				"applied", applied, "stream_last", known)
			f.j.counters.feedRestarts.Add(1)
			if err := f.consume(ctx, applied+1); err != nil {
				f.j.log.Warn("journal feed: new consumer failed; trying again", "err", err)
			} else {
				f.progress.Store(time.Now().UnixNano())
			}
		}
		cancel()
	}
}

// knownSeq returns the highest sequence the stream is known to hold: its
// last (info, nil if the stream could not be asked), or an acknowledged
// publish's.
func (f *feed) knownSeq(info *jetstream.StreamInfo) uint64 {
	var known uint64
	f.mu.Lock()
	for _, w := range f.waiters {
		known = max(known, w.seq)
	}
	f.mu.Unlock()
	if info != nil {
		known = max(known, info.State.LastSeq)
	}
	return known
}

// apply applies one message of the consumer of generation gen.
func (f *feed) apply(gen int, m jetstream.Msg) {
	md, err := m.Metadata()
	if err != nil {
		f.j.log.Error("journal: message without metadata", "err", err)
		return
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if gen != f.gen {
		return // a replaced consumer's
	}
	if md.Consumer != f.verified {
		// A new consumer: nats.go may have made it on a stream created
		// again (verify.go). Its messages wait, in order, for a check.
		f.applyMu.Unlock()
		ok := f.verifyConsumer()
		f.applyMu.Lock()
		if !ok || gen != f.gen {
			return
		}
		f.verified = md.Consumer
	}
	f.progress.Store(time.Now().UnixNano())
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
	f.release(seq, f.j.pub.tokenOf(m.Headers().Get("Nats-Msg-Id")))
}

// markCaughtUp records that the feed has reached the stream's end as it
// was at the start.
func (f *feed) markCaughtUp() {
	f.once.Do(func() { close(f.caught) })
}

// CaughtUp is closed once the feed has brought the store up to the stream
// as it was when Start was called: before that, the store lacks recent
// messages a client would expect (the edge serves clients after it).
func (j *Journal) CaughtUp() <-chan struct{} { return j.feed.caught }

// waiter is a publish acknowledged by JetStream whose message the store
// does not hold yet.
type waiter struct {
	seq      uint64
	tok      uint64 // the publish's token: the feed's owners say whether the replica holds it at seq
	check    uint64 // the stream checks started before its acknowledgment
	deadline time.Time
	done     func(seq uint64, err error)
}

// call completes the publish: stored at seq.
func (w waiter) call() { w.done(w.seq, nil) }

// whenApplied calls done(seq, nil) once the store holds the publish with
// token tok at seq (at once if it does), or at deadline (the publish's
// own) if the feed lags, provided that the stream is the one the journal
// opened (verify.go); else done gets an error.
func (f *feed) whenApplied(seq, tok uint64, deadline time.Time, done func(uint64, error)) {
	w := waiter{seq: seq, tok: tok, deadline: deadline, done: done}
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
func (f *feed) release(seq, tok uint64) {
	f.mu.Lock()
	f.owners[seq%ownerRing] = owner{seq: seq, tok: tok}
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

// expireWaiters completes the publishes whose message the feed has not
// brought (or a stream check not vouched for) within the publish
// timeout. JetStream stored them: if a stream check since found the
// stream unchanged, the ok is true, and only this edge's read-your-writes
// is lost while its feed lags; else they fail as unavailable.
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
	var due []waiter
	due, f.unverified = takeDue(due, f.unverified, now)
	due, f.waiters = takeDue(due, f.waiters, now)
	heap.Init(&f.waiters)
	confirmed := f.confirmed
	f.mu.Unlock()
	for _, w := range due {
		if confirmed > w.check {
			w.call()
		} else {
			f.j.counters.failed.Add(1)
			w.done(0, fmt.Errorf("%w: no look at the stream confirmed its acknowledgment in time", ErrUnavailable))
		}
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

// close stops the consumer and acknowledges the waiting publishes (they
// are stored), after one last look at the stream confirms that they were
// stored in the one this edge serves (verify.go).
func (f *feed) close() {
	f.mu.Lock()
	waiting := len(f.waiters)+len(f.unverified) > 0
	f.mu.Unlock()
	if waiting && f.j.Lost() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		f.j.checkEpoch(ctx)
		cancel()
	}
	f.stop(nil)
}

// stop stops the consumer and completes the waiting publishes: stored
// (err nil), or failed with err (the stream they were stored in is
// lost). Nothing is applied after it.
func (f *feed) stop(err error) {
	f.applyMu.Lock()
	cc := f.cc
	f.gen++ // nothing more is applied
	f.applyMu.Unlock()
	if cc != nil {
		cc.Stop()
	}
	f.mu.Lock()
	f.closed = true
	ws := append(f.waiters, f.unverified...)
	f.waiters, f.unverified = nil, nil
	f.mu.Unlock()
	for _, w := range ws {
		f.finishClosed(w, err)
	}
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

// Ready reports why the journal cannot serve yet, or nil: NATS is
// unreachable, or the feed has not caught up with the stream as it was
// when the edge started.
func (j *Journal) Ready() error {
	if err := j.Lost(); err != nil {
		return err
	}
	if !j.nc.IsConnected() {
		return errors.New("journal: not connected to NATS")
	}
	select {
	case <-j.feed.caught:
	default:
		return errors.New("journal: replaying the stream")
	}
	return nil
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

package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// sole says the feed appends this journal's acknowledged publishes
	// itself, without a consumer (sole.go); held are those past a gap,
	// by sequence, since heldSince. retire is a consumer the watchdog is
	// to stop, wantConsumer asks it to start one.
	sole         bool
	held         map[uint64]waiter
	heldSince    time.Time
	retire       jetstream.ConsumeContext
	wantConsumer bool
	// heldN is len(held), for Stats, which must not take applyMu: the
	// publishes' done functions run under it.
	heldN atomic.Int64
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
	// fed says Start made the feed fill a store: an acknowledgment then
	// waits for it. A journal opened only to publish (no store) has a
	// stream check confirm its acknowledgments instead.
	fed atomic.Bool

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
// must be a replica with the journal's epoch (store.Options.Epoch). It
// also starts, in the background, the recovery of the switches armed
// before the replay (recoverSwitches).
func (j *Journal) Start(ctx context.Context, st *store.Store) error {
	f := &j.feed
	// f.j is set by Open; the publisher's goroutines read it already.
	f.applyMu.Lock()
	f.st, f.handles = st, make(map[string]*store.Channel)
	f.applyMu.Unlock()
	f.fed.Store(true)
	if j.opts.Partitions > 1 && j.stream.CachedInfo().Config.Replicas > 1 {
		j.wg.Go(j.spread)
	}
	if j.opts.Interest {
		return j.startInterest(ctx, st)
	}
	var info *jetstream.StreamInfo
	var msgs []store.Frame
	since := time.Now().Add(-j.opts.Replay)
	err := j.retry(ctx, "find where to replay from", func(ctx context.Context) (err error) {
		if info, err = j.stream.Info(ctx); err != nil {
			return err
		}
		if !info.TimeStamp.IsZero() {
			j.skew = time.Until(info.TimeStamp)
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
	st.SetApplied(j.opts.Partition, from-1)
	f.progress.Store(time.Now().UnixNano())
	if f.target < from && j.opts.SoleWriter {
		// Nothing to replay, and nobody else writes: no consumer.
		f.applyMu.Lock()
		f.enterSoleLocked()
		f.applyMu.Unlock()
	} else if err := j.retry(ctx, "start the feed", func(actx context.Context) error { return f.consume(actx, from) }); err != nil {
		return err
	}
	if f.target < from {
		f.markCaughtUp()
	}
	j.wg.Go(f.watch)
	j.wg.Go(func() { j.recoverSwitches(from, info.State.FirstSeq) })
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
	f.leaveSoleLocked()
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
		f.j.reach.noteLook(info, f.st.Applied(f.j.opts.Partition), time.Now())
		f.soleChores(ctx)
		if time.Since(time.Unix(0, f.progress.Load())) < feedStall {
			cancel()
			continue
		}
		known := f.knownSeq(info)
		applied := f.st.Applied(f.j.opts.Partition)
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
	seq := md.Sequence.Stream
	hdr := m.Headers()
	f.storeLocked(seq, m.Subject(), md.Timestamp, hdr.Get(OriginHeader), m.Data())
	if v := hdr.Get(SwitchHeader); v != "" {
		f.j.announceSwitch(seq, m.Subject(), md.Timestamp, v, seq <= f.target)
	}
	if seq >= f.target || md.NumPending == 0 {
		f.markCaughtUp()
	}
	f.release(seq, idHash(hdr.Get(msgIDHeader)))
	if md.NumPending == 0 && seq >= f.target && f.j.opts.SoleWriter {
		f.enterSoleLocked()
	}
}

// storeLocked appends the message at seq, from origin ("": none), to the
// store and records seq as applied (release, which completes the
// waiters, follows). f.applyMu.
func (f *feed) storeLocked(seq uint64, subj string, t time.Time, origin string, data []byte) {
	f.progress.Store(time.Now().UnixNano())
	h := f.handles[subj]
	if h == nil {
		if f.j.isFence(subj) {
			// A fence (fence.go): no channel's message, but its sequence.
			f.st.SetApplied(f.j.opts.Partition, seq)
			return
		}
		if key, ok := f.j.purgeKeyOf(subj); ok {
			// A purge marker (purge.go): the channel's messages so far go,
			// up to the one it names, which this feed may not have read
			// before the log dropped it.
			through, perr := strconv.ParseUint(string(data), 10, 64)
			if perr != nil {
				f.j.log.Error("journal: purge marker without an offset", "subject", subj, "seq", seq, "err", perr)
			}
			if _, err := f.st.PurgeThrough(key, through, nil); err != nil && !errors.Is(err, store.ErrClosed) {
				f.j.log.Error("journal: cannot purge a channel", "subject", subj, "seq", seq, "err", err)
			}
			f.st.SetApplied(f.j.opts.Partition, seq)
			return
		}
		key, ok := f.j.keyOf(subj)
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
		_, err := h.AppendAtFrom(seq, t, origin, data)
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
	f.st.SetApplied(f.j.opts.Partition, seq)
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
	cc, retire := f.cc, f.retire
	f.gen++ // nothing more is applied
	f.sole, f.wantConsumer, f.retire = false, false, nil
	held := f.held
	f.held = nil
	f.heldN.Store(0)
	f.mu.Lock()
	f.closed = true // before applyMu goes: a later acknowledgment finds it
	f.mu.Unlock()
	f.applyMu.Unlock()
	for _, c := range []jetstream.ConsumeContext{cc, retire} {
		if c != nil {
			c.Stop()
		}
	}
	f.mu.Lock()
	ws := append(f.waiters, f.unverified...)
	f.waiters, f.unverified = nil, nil
	f.mu.Unlock()
	for _, w := range held {
		ws = append(ws, w)
	}
	for _, w := range ws {
		f.finishClosed(w, err)
	}
}

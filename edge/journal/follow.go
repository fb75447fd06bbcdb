package journal

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/edge/store"
)

// follow is one followed channel of the interest feed (interest.go).
type follow struct {
	i   *interest
	key string
	h   *store.Channel

	// refs and subs are the interest's (interest.mu).
	refs int
	subs [2]*nats.Subscription // the channel's subject and its purge subject

	ready chan struct{} // closed once started (or failed: err)
	err   error         // why it did not start; set before ready closes

	mu sync.Mutex // guards the fields below; taken under no other lock
	// started says applied and purged are set: before, the messages that
	// come are held.
	started bool
	// applied is the sequence up to which the store holds the channel's
	// messages (from where the follow started); purged the last purge
	// marker applied.
	applied, purged uint64
	// target and ptarget are sequences the stream holds (a message seen
	// past a gap, an acknowledgment, the leader's newest) that the feed
	// must reach: past them it reads the stream.
	target, ptarget uint64
	held            []feedMsg // past a gap (or before start), by sequence
	waiters         []waiter  // acknowledgments of sequences not applied yet
	filling         bool      // a fill goroutine runs
	stopped         error     // set once the follow ends
	changed         chan struct{}
}

// feedMsg is one republished message (or one read from the stream).
type feedMsg struct {
	seq, prev uint64 // prev: the channel's previous message (0: none known)
	purge     bool   // a purge marker
	t         time.Time
	origin    string
	data      []byte
	hdr       nats.Header
}

// dispatch applies the republished messages to their follows, in the
// order NATS delivers them, until the journal stops.
func (i *interest) dispatch() {
	for {
		select {
		case <-i.j.stop:
			return
		case m := <-i.in:
			i.deliver(m)
		}
	}
}

// deliver applies one republished message.
func (i *interest) deliver(m *nats.Msg) {
	subj := m.Header.Get(hdrSubject)
	key, purge := i.j.purgeKeyOf(subj)
	if !purge {
		var ok bool
		if key, ok = i.j.keyOf(subj); !ok {
			return
		}
	}
	seq, err := strconv.ParseUint(m.Header.Get(hdrSeq), 10, 64)
	if err != nil {
		i.j.log.Warn("journal: interest feed: a message without a sequence", "subject", subj)
		return
	}
	prev, _ := strconv.ParseUint(m.Header.Get(hdrLastSeq), 10, 64)
	t, err := time.Parse(time.RFC3339Nano, m.Header.Get(hdrTime))
	if err != nil {
		i.j.log.Warn("journal: interest feed: a message without a time", "subject", subj, "seq", seq)
		return
	}
	fm := feedMsg{seq: seq, prev: prev, purge: purge, t: t, origin: m.Header.Get(OriginHeader), data: m.Data, hdr: m.Header}
	i.mu.Lock()
	f := i.fol[key]
	i.mu.Unlock()
	if f == nil {
		var ok bool
		if f, ok = i.watched(key, fm); !ok {
			return // no longer followed
		}
	}
	f.mu.Lock()
	if !f.started {
		f.hold(fm)
	} else {
		f.applyLocked(fm)
	}
	f.mu.Unlock()
}

// hold keeps fm, in sequence order, for later. mu.
func (f *follow) hold(fm feedMsg) {
	n, found := slices.BinarySearchFunc(f.held, fm.seq, func(a feedMsg, seq uint64) int { return cmp.Compare(a.seq, seq) })
	if !found {
		f.held = slices.Insert(f.held, n, fm)
	}
}

// applyLocked applies fm if it follows what the store holds, else holds
// it and has the gap read from the stream. mu.
func (f *follow) applyLocked(fm feedMsg) {
	if fm.purge {
		if fm.seq <= f.purged {
			return
		}
		f.applyPurgeLocked(fm)
		f.drainLocked()
		return
	}
	switch {
	case fm.seq <= f.applied:
		return // applied (a fill's, or sent again)
	case fm.prev > f.applied:
		f.hold(fm)
		f.target = max(f.target, fm.prev)
		f.fillLocked()
		return
	}
	f.storeLocked(fm)
	f.drainLocked()
}

// storeLocked appends fm to the store. mu.
func (f *follow) storeLocked(fm feedMsg) {
	j := f.i.j
	_, err := f.h.AppendAtFrom(fm.seq, fm.t, fm.origin, fm.data)
	switch {
	case err == nil, errors.Is(err, store.ErrOffsetOrder):
		j.counters.applied.Add(1)
	case errors.Is(err, store.ErrClosed):
	default:
		j.log.Error("journal: interest feed: cannot store a message", "subject", f.i.j.subject(f.key), "seq", fm.seq, "err", err)
	}
	f.applied = fm.seq
	f.i.noteShown(fm.seq)
	if v := fm.hdr.Get(SwitchHeader); v != "" {
		j.announceSwitch(fm.seq, f.i.j.subject(f.key), fm.t, v, false)
	}
}

// applyPurgeLocked applies a purge marker. A marker older than a message
// the store already holds (it was lost, then read again) cannot drop
// only what came before it: the channel is dropped whole, and its
// subscribers are told they are out of sync. mu.
func (f *follow) applyPurgeLocked(fm feedMsg) {
	through, err := strconv.ParseUint(string(fm.data), 10, 64)
	if err != nil {
		f.i.j.log.Error("journal: interest feed: purge marker without an offset", "key", f.i.j.subject(f.key), "seq", fm.seq, "err", err)
	}
	if f.applied > fm.seq {
		through = f.applied
	}
	if _, err := f.i.st.PurgeThrough(f.key, through, nil); err != nil && !errors.Is(err, store.ErrClosed) {
		f.i.j.log.Error("journal: interest feed: cannot purge a channel", "key", f.i.j.subject(f.key), "seq", fm.seq, "err", err)
	}
	f.purged = fm.seq
	f.applied = max(f.applied, through)
	f.i.noteShown(fm.seq)
}

// drainLocked applies the held messages that now follow on, completes
// the acknowledgments the store now backs, and tells the waiters of
// await. mu.
func (f *follow) drainLocked() {
	for len(f.held) > 0 {
		fm := f.held[0]
		if fm.seq > f.applied && fm.prev > f.applied {
			break
		}
		f.held = f.held[1:]
		if fm.seq > f.applied {
			f.storeLocked(fm)
		}
	}
	if len(f.held) == 0 {
		f.held = nil
	}
	ws := f.waiters[:0]
	for _, w := range f.waiters {
		if f.backs(w) {
			f.i.noteShown(w.seq)
			w.call() // done functions never block (journal.go)
		} else {
			ws = append(ws, w)
		}
	}
	f.waiters = ws
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// backs reports whether the store holds w's message. mu.
func (f *follow) backs(w waiter) bool {
	if w.purge {
		return f.purged >= w.seq
	}
	return f.applied >= w.seq
}

// want raises the targets to sequences the stream holds, and reads the
// stream if the feed has not brought them.
func (f *follow) want(last, purged uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.started || f.stopped != nil {
		return
	}
	f.target, f.ptarget = max(f.target, last), max(f.ptarget, purged)
	f.fillLocked()
}

// await waits until the store holds the channel's messages up to last
// and its purge markers up to purged, reading the stream for what the
// feed does not bring within fillAfter.
func (f *follow) await(ctx context.Context, last, purged uint64) error {
	timer := time.NewTimer(fillAfter)
	defer timer.Stop()
	for {
		f.mu.Lock()
		if f.stopped != nil {
			err := f.stopped
			f.mu.Unlock()
			return err
		}
		if f.applied >= last && f.purged >= purged {
			f.mu.Unlock()
			return nil
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-timer.C:
			f.want(last, purged)
		case <-ctx.Done():
			return fmt.Errorf("journal: the feed of %s stays behind %d: %w", f.i.j.subject(f.key), last, ctx.Err())
		}
	}
}

// fillLocked starts a fill unless one runs or nothing is missing. mu.
func (f *follow) fillLocked() {
	if f.filling || (f.target <= f.applied && f.ptarget <= f.purged) {
		return
	}
	f.filling = true
	f.i.j.wg.Go(f.fill)
}

// fillBatch is how many messages one read of a fill asks for.
const fillBatch = 256

// fill reads from the stream what the feed has not brought, up to the
// targets, until nothing is missing or the follow stops.
func (f *follow) fill() {
	for pause := 50 * time.Millisecond; ; pause = min(2*pause, 2*time.Second) {
		f.mu.Lock()
		if f.stopped != nil || (f.target <= f.applied && f.ptarget <= f.purged) {
			f.filling = false
			f.mu.Unlock()
			return
		}
		from, to, pfrom, pto := f.applied+1, f.target, f.purged+1, f.ptarget
		f.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		msgs, ok, err := f.read(ctx, from, to, pfrom, pto)
		cancel()
		if err != nil || !ok {
			f.i.j.log.Debug("journal: interest feed: read a gap; trying again", "subject", f.i.j.subject(f.key), "to", to, "err", err)
			select {
			case <-f.i.j.stop:
				f.mu.Lock()
				f.filling = false
				f.mu.Unlock()
				return
			case <-time.After(pause):
			}
			continue
		}
		f.mu.Lock()
		for _, fm := range msgs {
			f.applyLocked(fm)
		}
		// The stream holds nothing else of the channel up to the
		// targets (expired, or purged): the store holds all of it.
		if to > f.applied && f.applied >= from-1 {
			f.applied = to
		}
		if pto > f.purged && f.purged >= pfrom-1 {
			f.purged = pto
		}
		f.drainLocked()
		f.mu.Unlock()
	}
}

// read returns the channel's messages from..to and its purge markers
// pfrom..pto as the stream holds them, in sequence order. to and pto
// are sequences of the channel the stream stored: an answer without them
// came from a copy that lags (direct gets are answered by any replica),
// unless the stream's leader no longer holds them either (purged,
// expired); ok is false then, and the caller asks again.
func (f *follow) read(ctx context.Context, from, to, pfrom, pto uint64) (msgs []feedMsg, ok bool, err error) {
	j := f.i.j
	reached := to < from
	for from <= to {
		frames, more, err := j.Next(ctx, f.key, from, fillBatch, 0)
		if err != nil {
			return nil, false, err
		}
		for _, fr := range frames {
			if fr.Offset > to {
				break
			}
			reached = reached || fr.Offset == to
			msgs = append(msgs, feedMsg{seq: fr.Offset, t: time.Unix(0, fr.Time), origin: string(fr.Origin), data: fr.Data})
		}
		if len(frames) == 0 || more == 0 || frames[len(frames)-1].Offset >= to {
			break
		}
		from = frames[len(frames)-1].Offset + 1
	}
	if !reached {
		if reached, err = f.gone(ctx, f.i.j.subject(f.key), to); err != nil || !reached {
			return nil, false, err
		}
	}
	if pto >= pfrom {
		ps := f.i.j.purgeSubject(f.key)
		frames, _, err := j.get(ctx, &getRequest{Seq: pfrom, NextFor: ps, Batch: fillBatch, UpToSeq: pto})
		if err != nil {
			return nil, false, err
		}
		preached := false
		for _, fr := range frames {
			preached = preached || fr.Offset == pto
			msgs = append(msgs, feedMsg{seq: fr.Offset, purge: true, t: time.Unix(0, fr.Time), data: fr.Data})
		}
		if !preached {
			if preached, err = f.gone(ctx, ps, pto); err != nil || !preached {
				return nil, false, err
			}
		}
	}
	slices.SortFunc(msgs, func(a, b feedMsg) int { return cmp.Compare(a.seq, b.seq) })
	return msgs, true, nil
}

// gone reports whether the stream's leader no longer holds the message
// of subj at seq: a read that did not find it is complete then.
func (f *follow) gone(ctx context.Context, subj string, seq uint64) (bool, error) {
	_, _, found, err := f.i.j.leaderGet(ctx, subj, &msgGetRequest{Seq: seq})
	return !found && err == nil, err
}

// acked completes w, a publish JetStream acknowledged, once the store
// holds it if its channel is followed, else at once: an edge without
// interest in a channel answers from the log.
func (i *interest) acked(w waiter) {
	key, purge := i.j.purgeKeyOf(w.subj)
	if !purge {
		var ok bool
		if key, ok = i.j.keyOf(w.subj); !ok {
			w.call() // a fence: no channel's
			return
		}
	}
	w.purge = purge
	i.noteShown(w.seq)
	i.mu.Lock()
	f := i.fol[key]
	i.mu.Unlock()
	if f == nil {
		w.call()
		return
	}
	f.mu.Lock()
	if f.stopped != nil || (f.started && f.backs(w)) {
		f.mu.Unlock()
		w.call()
		return
	}
	f.waiters = append(f.waiters, w)
	f.mu.Unlock()
	seq := w.seq
	time.AfterFunc(fillAfter, func() {
		if purge {
			f.want(0, seq)
		} else {
			f.want(seq, 0)
		}
	})
}

// expire fails the acknowledgments the feed has not backed by their
// deadline, as the ordered feed's expireWaiters does.
func (f *follow) expire(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ws := f.waiters[:0]
	for _, w := range f.waiters {
		if now.After(w.deadline) {
			f.i.j.counters.failed.Add(1)
			w.done(0, fmt.Errorf("%w: %w: JetStream stored it at %d, but this edge's store had not applied it by the publish's deadline",
				ErrUnavailable, ErrFateUnknown, w.seq))
		} else {
			ws = append(ws, w)
		}
	}
	f.waiters = ws
}

// unsubscribe ends the follow's subscriptions. interest.mu (or new).
func (f *follow) unsubscribe() {
	for _, s := range f.subs {
		if s != nil {
			_ = s.Unsubscribe()
		}
	}
}

// stop ends the follow: its acknowledgments are complete (JetStream
// stored them; the edge no longer serves the channel from its store).
func (f *follow) stop(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = err
	for _, w := range f.waiters {
		w.call()
	}
	f.waiters = nil
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

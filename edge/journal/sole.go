package journal

import (
	"context"
	"fmt"
	"time"
)

// A sole writer (Options.SoleWriter) is a journal that nobody but itself
// writes to: a durable single node whose NATS only this edge can reach.
// Reading every message back through the ordered consumer then costs
// about a third of a publish's CPU (JetStream delivers it, nats.go
// parses it again) to learn what the edge already knows: JetStream's
// acknowledgment gives the sequence, and the publish has the subject and
// the payload. So once the consumer has caught up with the stream, the
// feed stops it and appends each acknowledged publish itself, in
// sequence order: the acknowledgment of applied+1 is appended at once,
// one past a gap is held until the gap fills. Positions are the same
// as the consumer's (the offset is the stream sequence, whoever appends
// it), and so is the log: a restart replays it through the consumer.
//
// Whatever the sole writer does not expect goes back to the consumer, at
// applied+1, never to a wrong or a missing message: a gap that does not
// fill within soleGapWait (a publish stored whose acknowledgment never
// came, as after a timeout, or another writer after all), more than
// maxHeld acknowledgments past a gap, an acknowledgment at an applied
// sequence the replica holds another message at (a stream created
// again), or the watchdog finding the stream ahead. The held
// acknowledgments become waiters of the consumer; once it has caught up
// again, the feed is a sole writer again.

// soleGapWait is how long an acknowledgment past a gap waits for the
// gap's before the consumer takes over (Options.soleGapWait): less than
// an AckWait, after which a retry would bring a lost acknowledgment.
const soleGapWait = 500 * time.Millisecond

// maxHeld bounds the acknowledgments held past a gap.
const maxHeld = 1 << 12

// acked takes JetStream's acknowledgment of the publish w: a sole writer
// appends it (or holds it past a gap); else it waits for the consumer.
func (f *feed) acked(w waiter) {
	if !f.j.opts.SoleWriter {
		f.whenApplied(w)
		return
	}
	// Under applyMu, so that an acknowledgment never slips between the
	// consumer and the sole writer as the feed switches.
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if !f.sole {
		f.whenApplied(w)
		return
	}
	defer f.noteHeld()
	next := f.st.Applied(f.j.opts.Partition) + 1
	switch {
	case w.seq < next:
		// Applied before: a retry's acknowledgment, or another stream's.
		f.mu.Lock()
		w.check = f.checks
		v := f.settleLocked(w)
		f.mu.Unlock()
		if v == theirs {
			f.fallbackLocked(fmt.Sprintf("an acknowledgment at %d, where the replica holds another message", w.seq))
		}
		f.settle(w, v)
	case w.seq > next:
		if old, dup := f.held[w.seq]; dup {
			if old.id == w.id {
				// The same Msg-Id again: a caller's, published twice,
				// which JetStream stored once and acknowledges again at
				// its sequence (a duplicate). It is answered once that
				// sequence is applied, after the one held.
				f.whenApplied(w)
				return
			}
			f.held[w.seq] = w
			f.fallbackLocked(fmt.Sprintf("two publishes acknowledged at %d", w.seq))
			f.whenApplied(old)
			return
		}
		if len(f.held) == 0 {
			f.heldSince = time.Now()
		}
		f.held[w.seq] = w
		if len(f.held) > maxHeld {
			f.fallbackLocked(fmt.Sprintf("%d acknowledgments past %d", len(f.held), next))
		}
	default:
		f.appendOwnLocked(w)
	}
}

// appendOwnLocked appends the publish w at applied+1, and after it the
// held ones that follow it, completing each, then the acknowledgments
// that wait for its sequence (its Msg-Id's duplicates). f.applyMu.
func (f *feed) appendOwnLocked(w waiter) {
	for {
		now := time.Now()
		f.storeLocked(w.seq, w.subj, now, w.origin, w.data)
		f.j.counters.own.Add(1)
		if w.req != nil {
			// As the consumer's messages do: the edge's own switch is
			// then armed even if its publisher stops waiting.
			if v := w.req.msg.Header.Get(SwitchHeader); v != "" {
				f.j.announceSwitch(w.seq, w.subj, now, v, false)
			}
		}
		w.call()
		f.release(w.seq, w.id)
		next, ok := f.held[w.seq+1]
		if !ok {
			break
		}
		delete(f.held, w.seq+1)
		w = next
	}
	if len(f.held) > 0 {
		f.heldSince = time.Now() // the gap moved on: its own wait starts
	}
}

// enterSoleLocked makes the feed a sole writer: the consumer has caught
// up with the stream, and what comes next is this journal's. The
// waiting acknowledgments (which came before their messages) are held,
// to be appended in order. The watchdog stops the consumer. f.applyMu.
func (f *feed) enterSoleLocked() {
	if f.sole {
		return
	}
	f.sole = true
	f.gen++ // the consumer's later messages, if any, are dropped
	f.retire, f.cc = f.cc, nil
	if f.held == nil {
		f.held = make(map[uint64]waiter)
	}
	f.mu.Lock()
	ws := f.waiters
	f.waiters = nil
	for _, w := range ws {
		if _, dup := f.held[w.seq]; dup || w.subj == "" {
			// Another acknowledgment at w.seq (a Msg-Id's duplicate),
			// or a waiter with no message to append (Journal.Await's):
			// it waits for the sequence to be applied, as it did, by
			// the publish held there or by the log once the gap check
			// falls back to it.
			f.waiters.push(w)
			continue
		}
		f.held[w.seq] = w
	}
	f.mu.Unlock()
	f.heldSince = time.Now()
	if w, ok := f.held[f.st.Applied(f.j.opts.Partition)+1]; ok {
		delete(f.held, w.seq)
		f.appendOwnLocked(w)
	}
	f.noteHeld()
	f.kickCheck()
}

// leaveSoleLocked hands the feed back to the consumer: the held
// acknowledgments wait for it. f.applyMu.
func (f *feed) leaveSoleLocked() {
	if !f.sole {
		return
	}
	f.sole = false
	for _, w := range f.held {
		f.whenApplied(w)
	}
	clear(f.held)
	f.noteHeld()
}

// noteHeld publishes len(held) for Stats. f.applyMu.
func (f *feed) noteHeld() { f.heldN.Store(int64(len(f.held))) }

// fallbackLocked leaves the sole writer for the consumer because of
// what the writer did not expect (why); the watchdog starts the
// consumer at once. f.applyMu.
func (f *feed) fallbackLocked(why string) {
	if !f.sole {
		return
	}
	f.j.log.Warn("journal feed: reading the stream again through a consumer", "why", why,
		"applied", f.st.Applied(f.j.opts.Partition))
	f.leaveSoleLocked()
	f.wantConsumer = true
	f.j.counters.soleFallbacks.Add(1)
	f.kickCheck()
}

// checkGap falls back to the consumer when a gap did not fill in time.
// The publisher's retry loop calls it.
func (f *feed) checkGap(now time.Time) {
	if !f.j.opts.SoleWriter {
		return
	}
	f.applyMu.Lock()
	defer f.applyMu.Unlock()
	if wait := f.j.opts.soleGapWait; f.sole && len(f.held) > 0 && now.Sub(f.heldSince) >= wait {
		f.fallbackLocked(fmt.Sprintf("sequence %d did not come in %v", f.st.Applied(f.j.opts.Partition)+1, wait))
	}
}

// soleChores is the watchdog's part: it stops the consumer a sole writer
// replaced, and starts one the sole writer fell back to.
func (f *feed) soleChores(ctx context.Context) {
	f.applyMu.Lock()
	retire, want := f.retire, f.wantConsumer
	f.retire, f.wantConsumer = nil, false
	f.applyMu.Unlock()
	if retire != nil {
		retire.Stop()
	}
	if !want {
		return
	}
	if err := f.consume(ctx, f.st.Applied(f.j.opts.Partition)+1); err != nil {
		f.j.log.Warn("journal feed: new consumer failed; trying again", "err", err)
		f.applyMu.Lock()
		f.wantConsumer = true
		f.applyMu.Unlock()
		return
	}
	f.progress.Store(time.Now().UnixNano())
}

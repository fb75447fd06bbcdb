package journal

import (
	"context"
	"fmt"
	"hash/maphash"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A position is EPOCH:OFFSET, and a stream deleted and created again
// numbers its messages from 1 again. Until the journal notices (the
// watchdog asks the stream every second), JetStream may acknowledge a
// publish at a sequence the replica already holds another message at
// (that of the old stream), and nats.go's ordered consumer, which
// recreates itself after the last sequence it delivered, may deliver the
// new stream's messages as if they followed the old one's. So the
// journal trusts neither on its own:
//
//   - a publish is acknowledged at seq only when the replica holds that
//     very publish at seq (the feed keeps, for its recent sequences, a
//     hash of each message's Msg-Id: this journal's are unique, and a
//     caller's, PublishID, name one message), or
//     when a look at the stream that started after JetStream's answer
//     found the same incarnation (an answer from a stream that still
//     exists afterwards is from that stream);
//   - the feed applies nothing from a consumer (each recreation is a new
//     consumer name) before such a look found the stream unchanged, and
//     a consumer's errors (deleted, heartbeats missed) start one at once.

// ownerRing is how many recent sequences the feed remembers the
// publisher of; an acknowledgment later than that many messages is
// confirmed by a stream check instead (it waits up to watchEvery).
const ownerRing = 1 << 14

// owner says which message (the hash of its Msg-Id, 0 for none) the
// feed applied at seq.
type owner struct{ seq, id uint64 }

// verdict is what the replica says of a publish JetStream acknowledged
// at a sequence the replica has applied.
type verdict int

const (
	ours    verdict = iota // the replica holds this publish there
	theirs                 // the replica holds another message there: a stream of another incarnation answered
	unknown                // too old to remember: a stream check decides
)

// idSeed seeds the hashes of Msg-Ids: they are compared within the
// process only.
var idSeed = maphash.MakeSeed()

// idHash returns the hash of a Msg-Id, 0 for none.
func idHash(msgID string) uint64 {
	if msgID == "" {
		return 0
	}
	return maphash.String(idSeed, msgID)
}

// vouchLocked judges the waiter w, whose sequence the replica has
// applied. f.mu.
func (f *feed) vouchLocked(w waiter) verdict {
	o := f.owners[w.seq%ownerRing]
	switch {
	case o.seq == w.seq && o.id == w.id:
		return ours
	case o.seq == w.seq:
		return theirs
	case f.confirmed > w.check:
		return ours // the stream was found unchanged after JetStream's answer
	}
	return unknown
}

// settleLocked judges the waiter w, whose sequence the replica has
// applied, and parks it for a stream check if the replica cannot say;
// the caller completes it by the verdict (settle) once f.mu is released.
// f.mu.
func (f *feed) settleLocked(w waiter) verdict {
	v := f.vouchLocked(w)
	switch v {
	case theirs:
		f.kickCheck()
	case unknown:
		f.unverified = append(f.unverified, w)
		f.kickCheck()
	}
	return v
}

// settle completes w by the verdict settleLocked gave: stored at its
// sequence, or failed (its acknowledgment came from another stream).
func (f *feed) settle(w waiter, v verdict) {
	switch v {
	case ours:
		w.call()
	case theirs:
		f.j.counters.failed.Add(1)
		w.done(0, unavailable(fmt.Errorf("%w: JetStream acknowledged the publish at %d, where this edge holds another message", ErrStreamLost, w.seq)))
	}
}

// kickCheck makes the watchdog look at the stream now rather than at its
// next tick. It never blocks: it runs under nats.go's locks.
func (f *feed) kickCheck() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
}

// checkEpoch is checkStream, recorded: a check that finds the stream
// unchanged confirms every acknowledgment that arrived before it
// started, and completes the waiters parked for one.
func (j *Journal) checkEpoch(ctx context.Context) *jetstream.StreamInfo {
	f := &j.feed
	f.mu.Lock()
	f.checks++
	c := f.checks
	f.mu.Unlock()
	info := j.checkStream(ctx)
	if info == nil {
		return nil
	}
	f.mu.Lock()
	f.confirmed = max(f.confirmed, c)
	var due []waiter
	kept := f.unverified[:0]
	for _, w := range f.unverified {
		if w.check < c {
			due = append(due, w)
		} else {
			kept = append(kept, w)
		}
	}
	clear(f.unverified[len(kept):])
	f.unverified = kept
	f.mu.Unlock()
	for _, w := range due {
		w.call()
	}
	return info
}

// verifyConsumer waits until a stream check finds the stream unchanged
// (true) before the feed applies the first message of a new consumer,
// or the stream is lost or the journal closes (false). It retries while
// NATS does not answer: the consumer waits, and so do the
// acknowledgments behind it.
func (f *feed) verifyConsumer() bool {
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		info := f.j.checkEpoch(ctx)
		cancel()
		if info != nil {
			return true
		}
		if f.j.Lost() != nil {
			return false
		}
		select {
		case <-f.j.stop:
			return false
		case <-time.After(wait):
		}
	}
}

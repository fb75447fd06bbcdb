package journal

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
)

// A publish's fate. A publish that fails is one of two kinds, and its
// caller must tell them apart, because its client may act on it:
//
//   - ErrNotStored: the log does not hold the message and never will
//     (it was never sent, or JetStream refused it, or it waited behind
//     an uncertain one past its deadline). Publishing it again is safe.
//   - ErrFateUnknown: it was sent, and no answer came within the publish
//     timeout. It may be stored (once: the Msg-Id dedupes every send) or
//     not. The publisher does not forget it: it goes on asking JetStream
//     by its Msg-Id (sending it again, with the same Msg-Id) until it gets
//     a sequence or a definite refusal, and holds every later publish of
//     the edge, unsent, until then. So no publish made after the caller
//     learns ErrFateUnknown is stored before the one it is about: a
//     connection's order holds, or the later ones fail with ErrNotStored.
//     The asking ends at the latest resolveWindow after the first send
//     (inside the stream's duplicates window: a send past it could store
//     the message twice), and then the held publishes go on.
//
// A publish sent again after a later publish of the edge was stored is
// fenced, not sent again (fence.go): it is stored before the later one,
// or fails with ErrNotStored for good.
//
// JetStream's code 10158 ("duplicate message id is in process") is no
// answer either: an earlier send with the Msg-Id is still being proposed.
// The publisher asks again, with backoff, as for a leaderless stream.

// ErrNotStored: the message is not in the log and will not be; it is
// safe to publish it again (store.ErrNotStored, which the server knows).
// Errors that wrap it wrap ErrUnavailable too, unless JetStream refused
// the message.
var ErrNotStored = store.ErrNotStored

// ErrFateUnknown: the log did not answer within the publish timeout; the
// message may have been stored (once). Errors that wrap it wrap
// ErrUnavailable too. The journal sends no later publish before it knows
// (see the note above). It is store.ErrFateUnknown.
var ErrFateUnknown = store.ErrFateUnknown

// errCodeInProcess is JetStream's "duplicate message id is in process"
// (JSStreamDuplicateMessageConflict): an earlier send with the Msg-Id is
// being proposed. Not an answer.
const errCodeInProcess = 10158

// maxRetryPause bounds the pause between two rounds of a recovery, which
// doubles from retryPause while no answer comes.
const maxRetryPause = 1600 * time.Millisecond

// resolveWindow is how long after its first send the publisher goes on
// asking about a publish whose fate is unknown: within the duplicates
// window, so that a send cannot store it a second time.
func (o *Options) resolveWindow() time.Duration { return o.Duplicates * 7 / 8 }

// PublishTimeout is the deadline of every publish (Options.PublishTimeout):
// past it, its caller gets an answer, whatever the log did.
func (j *Journal) PublishTimeout() time.Duration { return j.opts.PublishTimeout }

// DuplicatesWindow is how long a Msg-Id, once stored, keeps a publish
// with the same one from being stored again (Options.Duplicates).
func (j *Journal) DuplicatesWindow() time.Duration { return j.opts.Duplicates }

// ResolveWindow is how long after a publish's first send the journal
// asks about one whose fate is unknown, holding later publishes.
func (j *Journal) ResolveWindow() time.Duration { return j.opts.resolveWindow() }

// notStored is the error of a publish that was not stored, for why.
func notStored(why string) error {
	return fmt.Errorf("%w: %w: %s", ErrUnavailable, ErrNotStored, why)
}

// fateUnknown is the error of a publish sent but not answered within
// timeout.
func fateUnknown(timeout time.Duration) error {
	return fmt.Errorf("%w: %w (no answer from JetStream within %v)", ErrUnavailable, ErrFateUnknown, timeout)
}

// failure is a publish to fail, with its error.
type failure struct {
	r   *pubReq
	err error
}

// expireLocked handles the pending publish r, with token tok, past its
// deadline: one never sent leaves the publisher, not stored; one sent
// stays, its fate unknown, and the publisher goes on asking about it, in
// a recovery that holds every later publish. p.mu.
func (p *publisher) expireLocked(tok uint64, r *pubReq) failure {
	if r.sends == r.unsent {
		delete(p.pending, tok)
		p.replies.release(r, false)
		why := fmt.Sprintf("it waited %v behind publishes the log did not answer, and was never sent", p.j.opts.PublishTimeout)
		if r.sends > 0 {
			why = fmt.Sprintf("for %v the connection to NATS took none of its sends", p.j.opts.PublishTimeout)
		}
		return failure{r, notStored(why)}
	}
	r.answered = true
	if !p.recovering {
		p.startRecoveryLocked()
	}
	return failure{r, fateUnknown(p.j.opts.PublishTimeout)}
}

// abandonLocked stops asking about r, with token tok, whose fate is
// unknown, past resolveWindow after its first send: the held publishes
// go on. p.mu.
func (p *publisher) abandonLocked(tok uint64, r *pubReq) {
	delete(p.pending, tok)
	p.replies.release(r, false)
	p.j.counters.abandoned.Add(1)
	p.j.log.Warn("journal: the log never told whether a publish was stored; sending later publishes again",
		"msg_id", r.msg.Header.Get(msgIDHeader), "asked_for", p.j.opts.resolveWindow().String())
}

// startRecoveryLocked starts a recovery: every publish given so far is
// sent again, in order, before any later one, in rounds whose pause
// doubles while no answer comes. p.mu.
func (p *publisher) startRecoveryLocked() {
	p.recovering, p.recoverUntil = true, p.next
	p.pause = retryPause
}

// settled reports whether r's caller has its answer already (its fate
// was unknown): a later answer from JetStream only ends the asking.
// p.mu is not held; r is out of the pending ones.
func (p *publisher) settled(r *pubReq, what string) bool {
	if !r.answered {
		return false
	}
	p.j.counters.resolved.Add(1)
	p.j.log.Info("journal: the log answered a publish whose fate its client was told is unknown",
		"msg_id", r.msg.Header.Get(msgIDHeader), "answer", what)
	return true
}

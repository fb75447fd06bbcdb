package journal

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/store"
)

// Conditional publishes serve what needs the channel's newest message in
// one step with the append: RTM's compare-and-set write and the previous
// message of read. JetStream checks the condition itself, atomically
// with storing, on the stream's leader: a publish with the header
// Nats-Expected-Last-Subject-Sequence: N is stored only if the newest
// message of its subject (the channel) is at sequence N (0: it has
// none); else it answers "wrong last sequence" and stores nothing. The
// edge reads the channel's newest message from the leader (Latest),
// decides, and publishes expecting that very message: stored, it is
// exactly the one replaced; refused, another writer came between, and
// the edge reads again.
//
// One catch: a single (non-clustered) JetStream checks the expected
// sequence before the Msg-Id, so a publish sent again after a lost
// acknowledgment, whose first send was stored, is refused as if another
// writer had come. MismatchError.Resent says a refusal may be that one;
// the caller then looks at the message at Last for its Msg-Id.

// condition is what a conditional publish expects: the newest message of
// its subject, or of subject if set, at last (0: none).
type condition struct {
	last    uint64
	subject string
}

// set writes the condition into a publish's headers: JetStream stores
// the message only if its subject's newest message (or subject's) is at
// last.
func (c *condition) set(h nats.Header) {
	h[jetstream.ExpectedLastSubjSeqHeader] = []string{strconv.FormatUint(c.last, 10)}
	if c.subject != "" {
		h[jetstream.ExpectedLastSubjSeqSubjHeader] = []string{c.subject}
	}
}

// JetStream's error codes for a publish whose expected last sequence is
// not the subject's (nats-server's jetstream_errors_generated.go):
// JSStreamWrongLastSequenceErrF names the subject's last sequence; a
// clustered stream answers JSStreamWrongLastSequenceConstantErr, without
// it, while another publish to the subject is being proposed.
const (
	errCodeWrongLast         = int(jetstream.JSErrCodeStreamWrongLastSequence)
	errCodeWrongLastConstant = int(jetstream.JSErrCodeStreamWrongLastSequenceConstant)
)

// MismatchError refuses a conditional publish (PublishExpect): the
// channel's newest message was not at the expected sequence (or another
// publish to it was being proposed), and nothing was stored. It is a
// store.ErrMismatch.
type MismatchError struct {
	// Last is the channel's newest sequence as JetStream answered (0 if
	// it did not say).
	Last   uint64
	resent bool
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("journal: the channel's newest message is at %d, not the one expected", e.Last)
}

// Unwrap makes a MismatchError a store.ErrMismatch.
func (e *MismatchError) Unwrap() error { return store.ErrMismatch }

// Resent returns Last, and whether the publish was sent more than once:
// then the message at Last may be its own first send (see the package's
// note on single nodes), which the caller tells by its Msg-Id.
func (e *MismatchError) Resent() (uint64, bool) { return e.Last, e.resent }

// PublishExpect is PublishFrom stored only if the channel's newest
// message is at sequence last (0: the channel has none); else done gets a
// *MismatchError. ctx's deadline, if before the publish timeout's, is the
// publish's (a request's one deadline). msgID should be unique to the attempt: a refused
// attempt is not a publish to retry. A ttl above 0 says the message arms
// a dead man's switch publishing ttlMessage after ttl seconds: the log
// keeps it with the message (SwitchHeader) for every edge's OnSwitch.
func (j *Journal) PublishExpect(ctx context.Context, key string, payload []byte, msgID, origin string, last uint64, ttl int64, ttlMessage []byte, done func(seq uint64, err error)) {
	x := pubExtra{cond: &condition{last: last}, sw: armed(ttl, ttlMessage), deadline: deadlineOf(ctx)}
	j.publish(j.subject(key), payload, msgID, origin, x, done)
}

// mismatch ends the conditional publish with token tok that JetStream
// refused (desc: its description, "wrong last sequence: N", or without
// N).
func (p *publisher) mismatch(tok uint64, desc string) {
	r := p.remove(tok)
	if r == nil || p.settled(r, "refused: "+desc) {
		return
	}
	var last uint64
	if _, n, ok := strings.Cut(desc, ":"); ok {
		last, _ = strconv.ParseUint(strings.TrimSpace(n), 10, 64)
	}
	p.mu.Lock()
	resent := r.resent
	p.mu.Unlock()
	r.done(0, &MismatchError{Last: last, resent: resent})
}

// errCodeNoMessage is JetStream's "no message found" (JSNoMessageFoundErr).
const errCodeNoMessage = int(jetstream.JSErrCodeMessageNotFound)

// Await waits until this edge's store holds the message published with
// msgID at seq (a conditional publish the caller found stored after its
// refusal, see Resent), as a publish's acknowledgment waits for it: up
// to ctx's deadline (else the publish timeout), past which it fails as
// the publish's fate unknown.
func (j *Journal) Await(ctx context.Context, seq uint64, msgID string) error {
	c := make(chan error, 1)
	deadline := deadlineOf(ctx)
	if deadline.IsZero() {
		deadline = time.Now().Add(j.opts.PublishTimeout)
	}
	j.feed.whenApplied(waiter{seq: seq, id: idHash(msgID), deadline: deadline,
		done: func(_ uint64, err error) { c <- err }})
	select {
	case err := <-c:
		return err
	case <-ctx.Done():
		return fmt.Errorf("journal: waiting for %d in the store: %w", seq, ctx.Err())
	}
}

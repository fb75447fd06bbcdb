package journal

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/sluicehq/sluice/edge/store"
)

// maxPending bounds the publishes in flight on one edge: past it a
// publish fails at once instead of holding more memory through an outage.
const maxPending = 1 << 16

// maxFeedWait bounds how long the sequence of a stored fence waits for
// the feed (beyond the watchdog's time to replace a stuck consumer), and
// an acknowledgment of a journal that feeds no store for a stream check.
const maxFeedWait = 6 * time.Second

// retryPause is the least time between two sends of a publish while the
// publisher recovers.
const retryPause = 100 * time.Millisecond

// publisher sends publishes to JetStream with request-reply on one inbox
// subscription and retries them, with the same Msg-Id, until they are
// acknowledged or their deadline passes. Acknowledgments and failures are
// delivered to each publish's done function, on the publisher's
// goroutines: done must not block.
//
// Order: publishes leave in the order Publish was called, and JetStream
// stores one connection's messages in the order they come. When one needs
// sending again (no answer within AckWait, or JetStream had no leader, or
// an earlier send is still being proposed), the publisher recovers: it
// holds the new publishes, sends every unanswered one again in order
// until they are all answered, then sends the held ones (a recovery is
// never extended to them). So a leader change does not let a later
// publish pass an earlier one that was refused. One sent and not answered
// by its deadline is not dropped: its caller learns its fate is unknown,
// and the recovery goes on until JetStream answers it (fate.go); one held
// past its deadline was never sent, and fails as not stored. Of the
// publishes in flight together when a fault begins, one may be lost
// silently while a later one is stored: once a publish sent after it is
// acknowledged with a sequence, its message is never sent again, but a
// fence with its Msg-Id (fence.go), which either finds it stored (before
// the later one) or takes its place for good (it fails as not stored).
// So a connection's publishes are stored in the order sent, or the
// out-of-order ones fail for good, those in flight together included.
// (One window remains: a later publish stored whose acknowledgment is
// lost, or slower than AckWait and a retry's pause, when the earlier
// one is sent again.)
type publisher struct {
	j     *Journal
	inbox string // reply subject prefix, unique to this journal; a publish's token follows it
	// idPrefix starts the Msg-Id of every publish without one of its
	// caller's: random, so unique to this journal, and short, since
	// JetStream keeps each Msg-Id for its duplicates window (msgID).
	idPrefix string
	sub      *nats.Subscription
	// ackHead is how JetStream starts an acknowledgment from the stream:
	// ackSeq reads those without a JSON decoder.
	ackHead []byte

	mu      sync.Mutex // guards the fields below; a leaf lock
	next    uint64     // the last token given
	pending map[uint64]*pubReq
	closed  bool
	// recovering says publishes up to recoverUntil are being sent again;
	// the later ones are held (not sent) until those are answered.
	recovering   bool
	recoverUntil uint64
	// pause is the least time between two sends of a recovering
	// publish: it doubles each round, up to maxRetryPause.
	pause time.Duration
	// replies hands out a sole writer's reply subjects (req.go).
	replies replies
	// storedTok is the highest token of a publish JetStream acknowledged
	// with a sequence: one before it that must be sent again is fenced
	// instead (fence.go).
	storedTok uint64
	// ownTok and ownSeq are the highest token of a publish with a Msg-Id
	// of the journal's own acknowledged with a sequence, and that
	// sequence: publishes stored out of send order are seen against it
	// (noteReordered).
	ownTok, ownSeq uint64
	// sendHook, set by tests only, sends in place of the connection.
	sendHook func(*nats.Msg) error
}

// pubReq is one publish in flight.
type pubReq struct {
	msg      nats.Msg
	first    time.Time // first send; zero while held
	sent     time.Time // last send; zero while held
	deadline time.Time
	done     func(seq uint64, err error)
	id       uint64 // the hash of its Msg-Id
	// resent says it was sent more than once (p.mu): a conditional
	// publish refused then may be refused because its first send was
	// stored (cond.go).
	resent bool
	// lent says its message was handed to a send other than Publish's
	// own (a retry, a held publish's), which may still read it: it is
	// never reused (req.go). p.mu.
	lent bool
	// answered says its caller was told its fate is unknown (fate.go):
	// it stays pending, asked about, and done is not called again. p.mu.
	answered bool
	// sends counts its sends, unsent those the NATS connection refused
	// (it was closed or reconnecting): if all were, it never left the
	// edge, and is not stored. p.mu.
	sends, unsent int
	// fenced says its message is never sent again, but its fence
	// (fence.go), sent fences times; looking that the stream's leader
	// is asked which of the two a sequence holds. p.mu.
	fenced  bool
	fences  int
	looking bool
	// callerID says its Msg-Id is its caller's: an answer "duplicate"
	// may carry the sequence of a message stored long before, or by
	// another edge, which says nothing of this edge's send order.
	callerID bool
}

// pubAck is JetStream's answer to a publish, in any form.
type pubAck struct {
	Stream    string `json:"stream"`
	Seq       uint64 `json:"seq"`
	Duplicate bool   `json:"duplicate"`
	Error     *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

func (p *publisher) start(j *Journal) error {
	p.j = j
	p.pending = make(map[uint64]*pubReq)
	p.replies.on = j.opts.SoleWriter
	id := nuid.Next()
	p.inbox = "_INBOX.sluice." + id + "."
	p.idPrefix = newIDPrefix()
	// As the server writes it (stream.go, mset.pubAck); a domain's or
	// any other form goes through encoding/json.
	p.ackHead = fmt.Appendf(nil, "{%q:%q,%q:", "stream", j.opts.Stream, "seq")
	sub, err := j.nc.Subscribe(p.inbox+"*", p.onReply)
	if err != nil {
		return fmt.Errorf("journal: subscribe to publish replies: %w", err)
	}
	// Acknowledgments must never be dropped as a slow consumer's.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return fmt.Errorf("journal: publish replies: %w", err)
	}
	p.sub = sub
	j.wg.Go(p.retryLoop)
	return nil
}

// Publish stores payload as the next message of the channel with store
// key key (the journal copies it). done is called once: with the
// message's stream sequence after JetStream stored it and the edge's
// store holds it, or with an error: ErrFateUnknown past the publish
// timeout if it was sent (the message may still have been stored, once;
// no later publish is sent before the journal knows), ErrNotStored if it
// surely was not (never sent, or refused), ErrTooLarge. All these are
// ErrUnavailable but a refusal. done runs on the journal's goroutines and
// must not block.
func (j *Journal) Publish(key string, payload []byte, done func(seq uint64, err error)) {
	j.PublishID(key, payload, "", done)
}

// MaxMsgIDBytes bounds the Msg-Id of PublishID.
const MaxMsgIDBytes = 256

// PublishID is Publish with a Msg-Id of the caller's (none: "", then the
// journal makes one up). JetStream stores a Msg-Id once within the
// stream's duplicates window (Options.Duplicates), whichever edge
// publishes it: a publish whose Msg-Id was stored before stores nothing,
// and done gets the sequence of the message first stored with it, so a
// request retried on another edge of a cluster is answered with the same
// position. The caller makes msgID name the message (its content
// included): the first message stored with it is the one kept.
func (j *Journal) PublishID(key string, payload []byte, msgID string, done func(seq uint64, err error)) {
	j.PublishFrom(context.Background(), key, payload, msgID, "", done)
}

// OriginHeader is the NATS header that carries a message's origin
// (PublishFrom): absent for a message without one, so that those cost
// nothing more.
const OriginHeader = "Sluice-Origin"

// PublishFrom is PublishID of a message from origin ("": none), an
// opaque tag of at most store.MaxOriginBytes that the log keeps with the
// message (in OriginHeader) and every edge's feed applies with it
// (store.Channel.AppendAtFrom), as does a catch-up read from the log
// (Next's frames carry it): the edge names there the connection that is
// not to receive the message (exclude_self). ctx's deadline, if before
// the publish timeout, is the publish's (a request's one deadline, part
// of which its reads took); nothing else of ctx is kept.
func (j *Journal) PublishFrom(ctx context.Context, key string, payload []byte, msgID, origin string, done func(seq uint64, err error)) {
	j.publish(j.subject(key), payload, msgID, origin, pubExtra{deadline: deadlineOf(ctx)}, done)
}

// pubExtra is what a publish may have beyond its message.
type pubExtra struct {
	cond *condition  // stored only if it holds (cond.go); nil: none
	sw   *deadSwitch // the switch it arms (switch.go); nil: none
	// deadline, if before the publish timeout's, is the caller's: a
	// request's one deadline, part of which its reads took.
	deadline time.Time
}

// deadlineOf returns ctx's deadline (zero if it has none).
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// publish is PublishFrom on subject subj with x.
func (j *Journal) publish(subj string, payload []byte, msgID, origin string, x pubExtra, done func(seq uint64, err error)) {
	if len(origin) > store.MaxOriginBytes {
		done(0, fmt.Errorf("journal: an origin of %d bytes: %w", len(origin), store.ErrOriginTooLong))
		return
	}
	if len(msgID) > MaxMsgIDBytes {
		done(0, fmt.Errorf("journal: a Msg-Id of %d bytes is longer than %d", len(msgID), MaxMsgIDBytes))
		return
	}
	p := &j.pub
	p.mu.Lock()
	switch {
	case p.closed:
		p.mu.Unlock()
		if err := j.Lost(); err != nil {
			done(0, unavailable(err))
			return
		}
		done(0, notStored("journal closed"))
		return
	case len(p.pending) >= maxPending:
		p.mu.Unlock()
		j.counters.failed.Add(1)
		done(0, notStored(fmt.Sprintf("%d publishes already wait for the log", maxPending)))
		return
	}
	p.next++
	var reply string
	if p.replies.on {
		reply = p.replies.take(p.inbox, p.next)
	} else {
		reply = p.replyTo(p.next)
	}
	callerID := msgID != ""
	if !callerID {
		msgID = p.msgID(p.next)
	}
	now := time.Now()
	r := newReq(subj, reply, msgID, payload)
	r.deadline, r.done, r.id, r.callerID = now.Add(j.opts.PublishTimeout), done, idHash(msgID), callerID
	if !x.deadline.IsZero() && x.deadline.Before(r.deadline) {
		r.deadline = x.deadline
	}
	if x.cond != nil {
		x.cond.set(r.msg.Header)
	}
	if x.sw != nil {
		x.sw.set(r.msg.Header)
	}
	if origin != "" {
		r.msg.Header[OriginHeader] = []string{origin}
	}
	m := &r.msg
	p.pending[p.next] = r
	held := p.recovering
	if held {
		r.lent = true // sendHeld will send it
	} else {
		r.first, r.sent = now, now
		r.sends++
	}
	token := p.next
	p.mu.Unlock()
	if !held {
		p.send(token, m)
	}
}

// replyTo returns the reply subject of the publish with token tok (but
// a sole writer's, req.go). p.mu.
func (p *publisher) replyTo(tok uint64) string {
	var buf [64]byte
	b := append(buf[:0], p.inbox...)
	return string(strconv.AppendUint(b, tok, 36))
}

// msgID returns the Msg-Id of the publish with token tok, when its caller
// gave none: unique to this journal and publish. JetStream holds a copy
// of every Msg-Id for its duplicates window, 600,000 at 20,000 publishes
// a second over 30 s: 11 bytes of prefix and the token in base 36 fit
// Go's 16- or 24-byte allocations, where the reply subject (about 42
// bytes) took 48. p.mu.
func (p *publisher) msgID(tok uint64) string {
	var buf [32]byte
	b := append(buf[:0], p.idPrefix...)
	return string(strconv.AppendUint(b, tok, 36))
}

// newIDPrefix returns 8 random bytes in unpadded base64url (11 bytes):
// another journal, here or on another edge, draws the same with
// probability 2^-64.
func newIDPrefix() string {
	var r [8]byte
	rand.Read(r[:]) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(r[:])
}

// send sends one attempt. A send the connection refuses for size fails
// the publish; any other failure (the reconnect buffer is full) is
// retried like an attempt that got no answer.
func (p *publisher) send(tok uint64, m *nats.Msg) {
	var err error
	if p.sendHook != nil {
		err = p.sendHook(m)
	} else {
		err = p.j.nc.PublishMsg(m)
	}
	switch {
	case err == nil:
	case errors.Is(err, nats.ErrMaxPayload):
		p.finish(tok, fmt.Errorf("%w: %w: %d bytes is more than NATS takes", ErrTooLarge, ErrNotStored, len(m.Data)))
	default:
		// The connection did not take it (closed, or reconnecting with
		// no buffer): this send never left the edge.
		p.mu.Lock()
		if r := p.pending[tok]; r != nil {
			r.unsent++
		}
		p.mu.Unlock()
	}
}

// take removes the publish with token tok, which JetStream answered with
// an acknowledgment at seq, reporting whether it was pending (only one
// of its answers, retries and deadline wins), and ends a recovery that
// it completes.
func (p *publisher) take(tok, seq uint64) bool {
	return p.removeAnswered(tok, seq) != nil
}

// remove takes the publish with token tok out of the pending ones, sends
// what a recovery it completes held, and returns it (nil if not pending).
func (p *publisher) remove(tok uint64) *pubReq {
	return p.removeAnswered(tok, 0)
}

// removeAnswered is remove; seq, if not 0, is the sequence the publish
// was acknowledged at, so its reply subject may serve again (req.go).
func (p *publisher) removeAnswered(tok, seq uint64) *pubReq {
	p.mu.Lock()
	r := p.pending[tok]
	delete(p.pending, tok)
	// The sequences of a later publish stored before it, or of an
	// earlier one stored after it, whichever was acknowledged first.
	var after, before uint64
	if r != nil {
		p.replies.release(r, seq != 0)
		if seq != 0 {
			p.storedTok = max(p.storedTok, tok)
		}
		switch {
		case seq == 0 || r.callerID:
		case tok > p.ownTok:
			if seq < p.ownSeq {
				before = p.ownSeq
			}
			p.ownTok, p.ownSeq = tok, seq
		case seq > p.ownSeq:
			after = p.ownSeq
		}
	}
	held := p.endRecoveryLocked()
	p.mu.Unlock()
	switch {
	case after != 0:
		p.noteReordered(r, seq, "later_seq", after)
	case before != 0:
		p.noteReordered(r, seq, "earlier_seq", before)
	}
	p.sendHeld(held)
	return r
}

// finish ends the publish with token tok with an error.
func (p *publisher) finish(tok uint64, err error) {
	if r := p.remove(tok); r != nil && !p.settled(r, err.Error()) {
		p.j.counters.failed.Add(1)
		r.done(0, err)
	}
}

// failAll fails every publish in flight, and every later one, with err
// (the stream is lost); the replies subscription stays until close.
func (p *publisher) failAll(err error) {
	for _, r := range p.shut() {
		if !r.answered {
			p.j.counters.failed.Add(1)
			r.done(0, unavailable(err))
		}
	}
}

// close fails every publish in flight.
func (p *publisher) close() {
	pending := p.shut()
	if p.sub != nil {
		_ = p.sub.Unsubscribe()
	}
	for _, r := range pending {
		switch {
		case r.answered:
		case r.sends == r.unsent:
			r.done(0, notStored("journal closed before it was sent"))
		default:
			r.done(0, fmt.Errorf("%w: %w (journal closed)", ErrUnavailable, ErrFateUnknown))
		}
	}
}

// shut refuses later publishes and takes the pending ones out.
func (p *publisher) shut() map[uint64]*pubReq {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	pending := p.pending
	p.pending = map[uint64]*pubReq{}
	clear(p.replies.tokOf)
	return pending
}

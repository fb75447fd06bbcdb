package journal

// A publish's answer: JetStream's PubAck (parsed by hand in its exact
// form, else by encoding/json), its errors, and what a stored message
// then waits for (the feed).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/edge/store"
)

// ErrTooLarge: NATS refuses a message this large (its max_payload). It
// is also a store.ErrTooLarge, which the edge answers message_too_large.
var ErrTooLarge = fmt.Errorf("journal: message too large for the log: %w", store.ErrTooLarge)

// onReply handles JetStream's answer to one attempt.
func (p *publisher) onReply(m *nats.Msg) {
	if rest, ok := strings.CutPrefix(m.Subject[len(p.inbox):], fenceMark); ok {
		if tok, err := strconv.ParseUint(rest, 36, 64); err == nil {
			p.onFenceReply(tok, m)
		}
		return
	}
	p.mu.Lock()
	tok, ok := p.tokenLocked(m.Subject)
	r := p.pending[tok]
	var fenced bool
	if r != nil {
		fenced = r.fenced
	}
	p.mu.Unlock()
	if !ok || r == nil {
		return // answered before (a retry's late twin)
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		p.recover() // no responders: no stream leader yet
		return
	}
	seq, ok := p.ackSeq(m.Data)
	if !ok {
		p.onSlowReply(tok, m.Data)
		return
	}
	if fenced && bytes.HasSuffix(m.Data, []byte(ackDuplicate)) {
		// Perhaps the sequence of its fence (fence.go).
		p.lookUp(tok, r, seq)
		return
	}
	p.stored(tok, r, seq)
}

// tokenLocked returns the token of the publish that reply subject subj
// is for, or false if it is none in flight's. p.mu.
func (p *publisher) tokenLocked(subj string) (uint64, bool) {
	if p.replies.on {
		tok, ok := p.replies.tokOf[subj]
		return tok, ok
	}
	tok, err := strconv.ParseUint(subj[len(p.inbox):], 36, 64)
	return tok, err == nil
}

// ackDuplicate ends an acknowledgment of a publish JetStream had stored
// before (a retry's), after the sequence.
const ackDuplicate = `,"duplicate": true}`

// ackSeq returns the sequence of a plain acknowledgment, in the exact
// form the server writes, or false for anything else (errors included):
// the one decoding every publish pays for, without encoding/json's
// reflection and allocations.
func (p *publisher) ackSeq(data []byte) (uint64, bool) {
	rest, ok := bytes.CutPrefix(data, p.ackHead)
	if !ok {
		return 0, false
	}
	var seq uint64
	n := 0
	for ; n < len(rest) && rest[n] >= '0' && rest[n] <= '9'; n++ {
		if n == 19 { // more digits than a uint64 surely holds
			return 0, false
		}
		seq = seq*10 + uint64(rest[n]-'0')
	}
	if n == 0 || seq == 0 || (rest[0] == '0' && n > 1) {
		return 0, false
	}
	if tail := string(rest[n:]); tail != "}" && tail != ackDuplicate {
		return 0, false
	}
	return seq, true
}

// onSlowReply handles an answer that is not a plain acknowledgment: an
// error, or a form ackSeq does not know.
func (p *publisher) onSlowReply(tok uint64, data []byte) {
	var ack pubAck
	if err := json.Unmarshal(data, &ack); err != nil {
		p.finish(tok, fmt.Errorf("journal: unreadable publish acknowledgment: %w", err))
		return
	}
	if e := ack.Error; e != nil {
		if e.Code == 503 || e.Code == 408 || e.ErrCode == errCodeInProcess {
			// Leaderless or busy, or an earlier send with the Msg-Id is
			// being proposed (fate.go): no answer, ask again.
			p.recover()
			return
		}
		if e.ErrCode == errCodeWrongLast || e.ErrCode == errCodeWrongLastConstant {
			p.mismatch(tok, e.Description)
			return
		}
		p.finish(tok, fmt.Errorf("%w: JetStream refused the publish: %s (code %d)", ErrNotStored, e.Description, e.ErrCode))
		return
	}
	if ack.Seq == 0 {
		p.finish(tok, errors.New("journal: publish acknowledgment without a sequence"))
		return
	}
	p.mu.Lock()
	r := p.pending[tok]
	fenced := r != nil && r.fenced
	p.mu.Unlock()
	switch {
	case r == nil:
	case fenced && ack.Duplicate:
		p.lookUp(tok, r, ack.Seq) // perhaps its fence's (fence.go)
	default:
		p.stored(tok, r, ack.Seq)
	}
}

// stored completes the publish r, with token tok, that JetStream stored
// at seq.
func (p *publisher) stored(tok uint64, r *pubReq, seq uint64) {
	// The log line's text only when there is one to write: built for
	// every publish, it cost an allocation each.
	if !p.take(tok, seq) || r.answered && p.settled(r, "stored at "+strconv.FormatUint(seq, 10)) {
		return
	}
	if err := p.j.Lost(); err != nil {
		// Stored, perhaps, but in a stream this edge no longer serves.
		p.j.counters.failed.Add(1)
		r.done(0, unavailable(err))
		return
	}
	p.j.counters.published.Add(1)
	now := time.Now()
	p.j.reach.noteAck(now)
	if o := p.j.opts.AckLatency; o != nil {
		o.Observe(now.Sub(r.first).Seconds())
	}
	// Stored: the reply waits for this edge's store (a read on this edge
	// then sees the message), up to the publish's deadline; past it the
	// publish fails as its fate unknown (expireWaiters), never an ok the
	// store does not back. Without a store, a stream check confirms it.
	wait := r.deadline
	if soon := now.Add(maxFeedWait); !p.j.feed.fed.Load() && soon.Before(wait) {
		wait = soon
	}
	w := waiter{seq: seq, id: r.id, deadline: wait, done: r.done, subj: r.msg.Subject, data: r.msg.Data,
		origin: r.msg.Header.Get(OriginHeader)}
	if !r.lent {
		// Out of pending, so no send has it: it is the waiter's now.
		w.req = r
	}
	if p.j.interest != nil {
		if v := r.msg.Header.Get(SwitchHeader); v != "" {
			p.j.announceArmed(r.msg.Subject, seq, v)
		}
	}
	p.j.backAck(w)
}

// backAck hands w, a publish JetStream acknowledged, to whichever feed
// backs it: the interest feed's follow of its channel, or the ordered
// feed.
func (j *Journal) backAck(w waiter) {
	if i := j.interest; i != nil {
		i.acked(w)
		return
	}
	j.feed.acked(w)
}

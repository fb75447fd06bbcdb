package journal

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// publisher sends publishes to JetStream with request-reply on one inbox
// subscription and retries them, with the same Msg-Id, until they are
// acknowledged or their deadline passes. Acknowledgments and failures are
// delivered to each publish's done function, on the publisher's
// goroutines: done must not block.
type publisher struct {
	j      *Journal
	inbox  string // reply subject prefix; a publish's token follows it
	idBase string // Msg-Id prefix, unique to this journal
	sub    *nats.Subscription

	mu      sync.Mutex // guards the fields below; a leaf lock
	next    uint64
	pending map[uint64]*pubReq
	closed  bool
}

// pubReq is one publish in flight.
type pubReq struct {
	msg      *nats.Msg
	first    time.Time // first attempt
	sent     time.Time // last attempt
	deadline time.Time
	done     func(seq uint64, err error)
}

// pubAck is JetStream's answer to a publish.
type pubAck struct {
	Stream string `json:"stream"`
	Seq    uint64 `json:"seq"`
	Error  *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error"`
}

func (p *publisher) start(j *Journal) error {
	p.j = j
	p.pending = make(map[uint64]*pubReq)
	id := nuid.Next()
	p.inbox = "_INBOX.sluice." + id + "."
	p.idBase = id + "-"
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
// key key. done is called once: with the message's stream sequence after
// JetStream stored it and the edge's store holds it, or with an error
// (ErrUnavailable past the publish timeout, or a refusal). done runs on
// the journal's goroutines and must not block.
func (j *Journal) Publish(key string, payload []byte, done func(seq uint64, err error)) {
	p := &j.pub
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		done(0, fmt.Errorf("%w: journal closed", ErrUnavailable))
		return
	}
	p.next++
	tok := strconv.FormatUint(p.next, 36)
	m := &nats.Msg{
		Subject: Subject(key),
		Reply:   p.inbox + tok,
		Header:  nats.Header{"Nats-Msg-Id": []string{p.idBase + tok}},
		Data:    payload,
	}
	now := time.Now()
	r := &pubReq{msg: m, first: now, sent: now, deadline: now.Add(j.opts.PublishTimeout), done: done}
	p.pending[p.next] = r
	p.mu.Unlock()
	// A send that fails (the reconnect buffer is full) is retried by
	// retryLoop like one that got no answer.
	_ = j.nc.PublishMsg(m)
}

// onReply handles JetStream's answer to one attempt.
func (p *publisher) onReply(m *nats.Msg) {
	tok, err := strconv.ParseUint(m.Subject[len(p.inbox):], 36, 64)
	if err != nil {
		return
	}
	p.mu.Lock()
	r := p.pending[tok]
	p.mu.Unlock()
	if r == nil {
		return // answered before (a retry's late twin)
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		p.retrySoon(tok, r) // no responders: no stream leader yet
		return
	}
	var ack pubAck
	if err := json.Unmarshal(m.Data, &ack); err != nil {
		p.finish(tok, 0, fmt.Errorf("journal: unreadable publish acknowledgment: %w", err))
		return
	}
	if e := ack.Error; e != nil {
		if e.Code == 503 || e.Code == 408 {
			p.retrySoon(tok, r) // leaderless or busy: try again
			return
		}
		p.finish(tok, 0, fmt.Errorf("journal: JetStream refused the publish: %s (code %d)", e.Description, e.ErrCode))
		return
	}
	if ack.Seq == 0 {
		p.finish(tok, 0, errors.New("journal: publish acknowledgment without a sequence"))
		return
	}
	seq := ack.Seq
	if !p.take(tok) {
		return
	}
	p.j.counters.published.Add(1)
	if o := p.j.opts.AckLatency; o != nil {
		o.Observe(time.Since(r.first).Seconds())
	}
	p.j.feed.whenApplied(seq, func(err error) { r.done(seq, err) })
}

// retrySoon makes the next retry pass resend r shortly.
func (p *publisher) retrySoon(tok uint64, r *pubReq) {
	p.mu.Lock()
	if p.pending[tok] == r {
		r.sent = time.Now().Add(-p.j.opts.AckWait + retryPause)
	}
	p.mu.Unlock()
}

// retryPause is the pause before a publish JetStream refused for want of
// a leader is sent again.
const retryPause = 100 * time.Millisecond

// take removes the publish with token tok, reporting whether it was
// pending (only one of its answers, retries and deadline wins).
func (p *publisher) take(tok uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pending[tok]; !ok {
		return false
	}
	delete(p.pending, tok)
	return true
}

// finish ends the publish with token tok with an error.
func (p *publisher) finish(tok uint64, seq uint64, err error) {
	p.mu.Lock()
	r := p.pending[tok]
	delete(p.pending, tok)
	p.mu.Unlock()
	if r != nil {
		p.j.counters.failed.Add(1)
		r.done(seq, err)
	}
}

// retryLoop resends the publishes not answered within AckWait and fails
// those past their deadline.
func (p *publisher) retryLoop() {
	tick := time.NewTicker(retryPause)
	defer tick.Stop()
	var resend []resendReq
	var failed []*pubReq
	for {
		select {
		case <-p.j.stop:
			return
		case <-tick.C:
		}
		now := time.Now()
		p.mu.Lock()
		for tok, r := range p.pending {
			switch {
			case now.After(r.deadline):
				delete(p.pending, tok)
				failed = append(failed, r)
			case now.Sub(r.sent) >= p.j.opts.AckWait:
				r.sent = now
				resend = append(resend, resendReq{tok, r.msg})
			}
		}
		p.mu.Unlock()
		// In the order they were first sent, so that a leader change
		// reorders nothing that it need not.
		slices.SortFunc(resend, func(a, b resendReq) int { return cmp.Compare(a.tok, b.tok) })
		for _, r := range resend {
			p.j.counters.retries.Add(1)
			_ = p.j.nc.PublishMsg(r.msg)
		}
		p.j.feed.expireWaiters(now)
		for _, r := range failed {
			p.j.counters.failed.Add(1)
			r.done(0, fmt.Errorf("%w (%v without an acknowledgment from JetStream)", ErrUnavailable, p.j.opts.PublishTimeout))
		}
		clear(resend)
		clear(failed)
		resend, failed = resend[:0], failed[:0]
	}
}

// resendReq is a publish to send again.
type resendReq struct {
	tok uint64
	msg *nats.Msg
}

// close fails every publish in flight.
func (p *publisher) close() {
	p.mu.Lock()
	p.closed = true
	pending := p.pending
	p.pending = map[uint64]*pubReq{}
	p.mu.Unlock()
	if p.sub != nil {
		_ = p.sub.Unsubscribe()
	}
	for _, r := range pending {
		r.done(0, fmt.Errorf("%w: journal closed", ErrUnavailable))
	}
}

package journal

import (
	"cmp"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
)

// A recovery sends the publishes in flight again, in order, while it
// holds the later ones (see publisher), or their fences (fence.go); the
// retry loop drives it.

// recover starts a recovery, unless one runs: every publish given so far
// is sent again, in order, before any later one. A recovery is never
// extended to the publishes it holds: one never sent is sent only once
// every publish before it is answered, so that it cannot be stored
// before one whose fate is not known yet.
func (p *publisher) recover() {
	p.mu.Lock()
	if !p.recovering {
		p.startRecoveryLocked()
	}
	p.mu.Unlock()
}

// endRecoveryLocked ends the recovery once no publish up to recoverUntil
// is pending, and returns the held publishes to send, in order.
func (p *publisher) endRecoveryLocked() []resendReq {
	if !p.recovering {
		return nil
	}
	for tok := range p.pending {
		if tok <= p.recoverUntil {
			return nil
		}
	}
	p.recovering = false
	now := time.Now()
	var held []resendReq
	for tok, r := range p.pending {
		if r.sent.IsZero() {
			r.first, r.sent = now, now
			r.lent = true
			r.sends++
			held = append(held, resendReq{tok, &r.msg})
		}
	}
	slices.SortFunc(held, func(a, b resendReq) int { return cmp.Compare(a.tok, b.tok) })
	return held
}

func (p *publisher) sendHeld(held []resendReq) {
	for _, h := range held {
		p.send(h.tok, h.msg)
	}
}

// resendReq is a publish to send.
type resendReq struct {
	tok uint64
	msg *nats.Msg
}

// retryLoop starts a recovery when a publish went unanswered for
// AckWait, sends the recovering publishes again in order, and fails those
// past their deadline.
func (p *publisher) retryLoop() {
	tick := time.NewTicker(retryPause)
	defer tick.Stop()
	for {
		select {
		case <-p.j.stop:
			return
		case <-tick.C:
		}
		resend, failed := p.due(time.Now())
		for _, r := range resend {
			p.j.counters.retries.Add(1)
			p.send(r.tok, r.msg)
		}
		for _, f := range failed {
			p.j.counters.failed.Add(1)
			f.r.done(0, f.err)
		}
		p.j.feed.expireWaiters(time.Now())
		p.j.feed.checkGap(time.Now())
	}
}

// due returns, in order, the publishes to send again now, and returns
// those past their deadline with their errors (expireLocked).
func (p *publisher) due(now time.Time) (resend []resendReq, failed []failure) {
	p.mu.Lock()
	defer p.mu.Unlock()
	window := p.j.opts.resolveWindow()
	for tok, r := range p.pending {
		switch {
		case r.answered:
			if now.Sub(r.first) >= window {
				p.abandonLocked(tok, r)
			}
		case now.After(r.deadline):
			failed = append(failed, p.expireLocked(tok, r))
		case !r.sent.IsZero() && now.Sub(r.sent) >= p.j.opts.AckWait && !p.recovering:
			p.startRecoveryLocked()
		}
	}
	if held := p.endRecoveryLocked(); len(held) > 0 {
		return held, failed // the failures ended the recovery
	}
	if !p.recovering {
		return nil, failed
	}
	for tok, r := range p.pending {
		if tok > p.recoverUntil || now.Sub(r.sent) < p.pause {
			continue
		}
		fence, fail := p.fenceLocked(tok, r)
		if fail {
			failed = append(failed, p.dropLocked(tok, r))
			continue
		}
		if r.first.IsZero() {
			r.first = now
		} else {
			r.resent = true
		}
		r.sent, r.lent = now, true
		r.sends++
		if fence != nil {
			resend = append(resend, resendReq{tok, fence})
			continue
		}
		resend = append(resend, resendReq{tok, &r.msg})
	}
	if len(resend) > 0 {
		p.pause = min(2*p.pause, maxRetryPause)
	}
	slices.SortFunc(resend, func(a, b resendReq) int { return cmp.Compare(a.tok, b.tok) })
	return resend, failed
}

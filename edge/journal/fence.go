package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// A fence settles a publish that must be retried after a later publish
// of this edge was stored. Publishes p1 and p2 sent in that order may
// be in flight together when a fault begins: p1 lost (it reached a
// leader that lost its leadership before replicating it), p2 stored at
// the new leader. Sending p1 again would store it after p2, breaking
// the order of the connection that sent them. So once a publish sent
// after p1 is acknowledged with a sequence, p1's message is never sent
// again: the publisher sends instead a fence, an empty message with
// p1's Msg-Id on the fence subject, which no channel's subject equals and
// every feed skips. JetStream dedupes a Msg-Id across subjects within
// the duplicates window, so exactly one of the two is ever stored:
//
//   - JetStream stores the fence (a fresh sequence): p1 was not stored
//     and now never will be, within the window that the publisher asks
//     in (resolveWindow). p1 fails with ErrNotStored.
//   - JetStream answers "duplicate" with a sequence: p1 was stored
//     there, by a send before the fence (its first, which preceded p2's
//     on one connection: a send lost at one leader is never stored
//     after a later one another leader stored, but by a retry, and
//     none was sent since p2's acknowledgment). p1 is stored.
//
// Fences have reply subjects of their own (fenceMark before the token),
// so that an answer to p1's message is never taken for the fence's.
// Two answers are ambiguous and are settled by reading the sequence
// from the stream's leader: a "duplicate" to a fence sent more than once
// (the first fence may have been stored), and a "duplicate" to p1's
// message once a fence was sent (the fence's sequence, maybe).

// fenceSubject is the subject of fences: in the stream (sluice.>), one
// token after the prefix where a channel's subject has two, and "$" is
// no base64url character: no channel's subject, nor a purge marker's,
// equals it.
func fenceSubject(prefix string) string { return prefix + "$fence" }

// fenceMark starts the last token of a fence's reply subject: no digit
// of a token (base 36), nor a sole writer's reply's "_".
const fenceMark = "~"

// isFence reports whether subj is the fences' subject.
func (j *Journal) isFence(subj string) bool { return subj == j.fence }

// fenceLocked decides how the pending publish r, with token tok, is sent
// again: nil if its message may be (no publish after it was stored),
// else its fence; fail says it must fail as not stored now instead (it
// never left the edge, and a later one was stored). p.mu.
func (p *publisher) fenceLocked(tok uint64, r *pubReq) (m *nats.Msg, fail bool) {
	if !r.fenced && tok >= p.storedTok {
		return nil, false
	}
	if !r.fenced && r.sends == r.unsent {
		return nil, true
	}
	r.fenced = true
	r.fences++
	var buf [64]byte
	b := append(append(buf[:0], p.inbox...), fenceMark...)
	return &nats.Msg{
		Subject: p.j.fence,
		Reply:   string(strconv.AppendUint(b, tok, 36)),
		Header:  nats.Header{msgIDHeader: []string{r.msg.Header.Get(msgIDHeader)}},
	}, false
}

// onFenceReply handles JetStream's answer to the fence of the publish
// with token tok.
func (p *publisher) onFenceReply(tok uint64, m *nats.Msg) {
	p.mu.Lock()
	r := p.pending[tok]
	var fences int
	if r != nil {
		fences = r.fences
	}
	p.mu.Unlock()
	if r == nil {
		return
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		p.recover()
		return
	}
	var ack pubAck
	if err := json.Unmarshal(m.Data, &ack); err != nil {
		p.j.log.Warn("journal: unreadable answer to a fence", "err", err)
		return // the next round asks again
	}
	if e := ack.Error; e != nil {
		if e.Code == 503 || e.Code == 408 || e.ErrCode == errCodeInProcess {
			p.recover()
			return
		}
		p.finish(tok, fmt.Errorf("%w: %w (JetStream refused its fence: %s, code %d)",
			ErrUnavailable, ErrFateUnknown, e.Description, e.ErrCode))
		return
	}
	switch {
	case ack.Seq == 0:
		return
	case !ack.Duplicate:
		p.fenced(tok, r, ack.Seq)
	case fences == 1:
		// The one fence found the Msg-Id stored: by the message.
		p.stored(tok, r, ack.Seq)
	default:
		p.lookUp(tok, r, ack.Seq)
	}
}

// fenced fails the publish r, with token tok, whose fence JetStream
// stored at seq: the message never will be. A sole writer's feed is told
// of the sequence, which it skips.
func (p *publisher) fenced(tok uint64, r *pubReq, seq uint64) {
	if p.remove(tok) == nil {
		return
	}
	p.j.counters.fenced.Add(1)
	p.j.backAck(waiter{seq: seq, id: r.id, deadline: time.Now().Add(maxFeedWait),
		done: func(uint64, error) {}, subj: p.j.fence})
	if p.settled(r, "fenced at "+strconv.FormatUint(seq, 10)) {
		return
	}
	p.j.counters.failed.Add(1)
	r.done(0, notStored("a publish sent after it was stored first, and the log now holds a fence in its place"))
}

// lookUp settles the publish r, with token tok, that JetStream answered
// with a duplicate at seq that may be its fence's: the stream's leader
// says which subject seq holds. One look at a time; a failed look
// leaves r to the next round's answer.
func (p *publisher) lookUp(tok uint64, r *pubReq, seq uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.looking || p.closed {
		return
	}
	r.looking = true
	// Under p.mu: once close has shut the publisher, the journal's
	// WaitGroup gets no more goroutines, and Close waits for this one.
	p.j.wg.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), getTimeout)
		subj, found, err := p.j.subjectAt(ctx, seq)
		cancel()
		p.mu.Lock()
		r.looking = false
		p.mu.Unlock()
		switch {
		case err != nil || !found:
			p.j.log.Warn("journal: cannot tell a fence from its message", "seq", seq, "found", found, "err", err)
		case p.j.isFence(subj):
			p.fenced(tok, r, seq)
		default:
			p.stored(tok, r, seq)
		}
	})
}

// subjectAt returns the subject of the stream's message at seq, as its
// leader holds it.
func (j *Journal) subjectAt(ctx context.Context, seq uint64) (string, bool, error) {
	data, err := json.Marshal(&msgGetRequest{Seq: seq})
	if err != nil {
		return "", false, err
	}
	m, err := j.nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+j.opts.Stream, data)
	if err != nil {
		return "", false, err
	}
	var resp msgGetResponse
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return "", false, err
	}
	if e := resp.Error; e != nil {
		if e.ErrCode == errCodeNoMessage {
			return "", false, nil
		}
		return "", false, fmt.Errorf("journal: message get: %s (code %d)", e.Description, e.ErrCode)
	}
	if resp.Message == nil {
		return "", false, nil
	}
	return resp.Message.Subject, true, nil
}

// dropLocked takes out the pending publish r, with token tok, that never
// left the edge (the connection took none of its sends) while a later
// one was stored: sending it now would store it after that one. p.mu.
func (p *publisher) dropLocked(tok uint64, r *pubReq) failure {
	delete(p.pending, tok)
	p.replies.release(r, false)
	return failure{r, notStored("the connection to NATS took none of its sends, and a publish sent after it was stored")}
}

// noteReordered reports the publish r, stored at seq out of send order
// with another publish of this edge's, stored at other (named by which:
// one sent later and stored before r, or one sent earlier and stored
// after it). It is the window fences leave (a later publish stored whose
// acknowledgment had not come when an earlier one was sent again). Only
// publishes with Msg-Ids of the journal's own are compared (a caller's,
// answered as a duplicate, carries the sequence of a message stored
// before, perhaps by another edge), each with the newest acknowledged so
// far only, so two publishes out of order are seen whichever is
// acknowledged first, but an interleaving of three or more may be
// counted less than it happened: the counter says the window was met,
// not how often.
func (p *publisher) noteReordered(r *pubReq, seq uint64, which string, other uint64) {
	p.j.counters.reordered.Add(1)
	p.j.log.Warn("journal: two publishes of this edge were stored in the other order than sent",
		"msg_id", r.msg.Header.Get(msgIDHeader), "seq", seq, which, other, "resent", r.resent)
}

package server

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Stream views: an rtm/subscribe with a filter (a SQL statement, see
// edge/view) gets the channel's messages through the view: WHERE drops,
// the select list projects. The view runs on the stored carrier (msgpack)
// of each message, in the subscription's writer, which owns its
// Evaluator: compiling once per subscription, evaluating once per message
// and statement when several subscriptions of the channel use it (they
// share the results, viewshare.go), else once per message. History and catch-up go through it too; a data PDU's
// position stays the channel's position after its batch.
//
// An aggregate view (COUNT, GROUP BY, MERGE...) counts the messages as
// the writer reads them and sends one message per group at the end of
// each period, as one data PDU whose position is the channel's after the
// last message counted; a period with no input sends nothing. History
// counts into the first period.

// subscriptionView is a subscription's compiled view.
type subscriptionView struct {
	v  *view.View
	ev *view.Evaluator // the writer's alone
	// share is the statement's results shared with the channel's other
	// subscriptions of it (viewshare.go); nil for an aggregate view.
	share       *viewShare
	shares      *viewShares // where share came from
	releaseOnce sync.Once
	// buf holds one batch's projections; outs are their ends in it.
	buf  []byte
	outs []int
	// over says the view gave up on a message (view.ErrBudget) and the
	// subscription ended: nothing more is evaluated. The writer's.
	over bool

	// Aggregate views only. The ticker goroutine sets due and wakes the
	// writer; the rest is the writer's.
	agg      *view.Aggregate
	period   time.Duration
	due      atomic.Bool
	stopOnce sync.Once
	done     chan struct{} // closed by stop: the ticker ends
	next     rtm.Position  // after the last message counted
	results  [][]byte
	// pending says the period being counted has input; from is then the
	// position of its first message, where a subscription ended now
	// resumes, since nothing of the period was sent.
	pending bool
	from    rtm.Position
}

// compileView checks and compiles the filter of a subscribe body, and
// returns the view and the channel it reads (the FROM clause).
func compileView(b *rtm.SubscribeBody) (*subscriptionView, string, error) {
	if b.SubscriptionID == "" {
		return nil, "", rtm.Errorf(rtm.CodeInvalidFormat, "a subscription with a filter needs a subscription_id")
	}
	v, err := view.Compile(b.Filter)
	if err != nil {
		if ve, ok := view.AsError(err); ok {
			return nil, "", rtm.Errorf(rtm.CodeInvalidFilter, "column %d: %s", ve.Column, ve.Reason)
		}
		return nil, "", rtm.Errorf(rtm.CodeInvalidFilter, "%v", err)
	}
	if b.Channel != "" && b.Channel != v.Channel() {
		return nil, "", rtm.Errorf(rtm.CodeInvalidFilter, "channel %q is not the filter's FROM channel %q", b.Channel, v.Channel())
	}
	period, err := view.Period(b.Period)
	if err != nil {
		return nil, "", rtm.Errorf(rtm.CodeInvalidFormat, "period: %v", err)
	}
	sv := &subscriptionView{v: v, ev: v.NewEvaluator()}
	if v.Aggregates() {
		sv.agg, sv.period, sv.done = v.NewAggregate(), period, make(chan struct{})
	}
	return sv, v.Channel(), nil
}

// start runs an aggregate view's period ticker, which wakes c's writer at
// the end of each period, until stop.
func (sv *subscriptionView) start(c *conn) {
	if sv.agg == nil {
		return
	}
	go func() {
		t := time.NewTicker(sv.period)
		defer t.Stop()
		for {
			select {
			case <-sv.done:
				return
			case <-t.C:
				sv.due.Store(true)
				c.Wake()
			}
		}
	}()
}

// stop ends the ticker, if any. Idempotent.
func (sv *subscriptionView) stop() {
	if sv.done != nil {
		sv.stopOnce.Do(func() { close(sv.done) })
	}
}

// join makes a simple view share its results with the other
// subscriptions of its statement on the channel of store key key.
func (sv *subscriptionView) join(vs *viewShares, key, statement string) {
	if sv.agg == nil {
		sv.share, sv.shares = vs.acquire(key+"\x00"+statement), vs
	}
}

// leave gives the share back. Idempotent.
func (sv *subscriptionView) leave() {
	if sv.share != nil {
		sv.releaseOnce.Do(func() { sv.shares.release(sv.share) })
	}
}

// count adds frames to an aggregate view's period; next is the channel's
// position after them. It stops with errGone once gone is closed, and
// with view.ErrBudget when the view gave up on a message.
func (sv *subscriptionView) count(frames []store.Frame, next rtm.Position, gone <-chan struct{}) error {
	if !sv.pending && len(frames) > 0 {
		sv.pending, sv.from = true, rtm.Position{Epoch: next.Epoch, Offset: frames[0].Offset}
	}
	for _, f := range frames {
		if isClosed(gone) {
			return errGone
		}
		m, err := payload.Encoding(f.Data, payload.Carrier)
		if err != nil || len(m) == 0 {
			return fmt.Errorf("%w: a view needs the carrier", payload.ErrCorrupt)
		}
		if !sv.agg.Add(m) {
			if err := sv.agg.Err(); err != nil {
				return err
			}
		}
	}
	sv.next = next
	return nil
}

// flushAggregate sends, if its period ended, the groups of sub's
// aggregate view as one data PDU.
func (c *conn) flushAggregate(w *writer, sub *subscription) error {
	sv := sub.view
	if sv == nil || sv.agg == nil || sv.over || !sv.due.Swap(false) {
		return nil
	}
	sv.results = sv.agg.Flush(sv.results[:0])
	if err := sv.agg.Err(); err != nil {
		clear(sv.results)
		return c.endView(w, sub, err, sub.position())
	}
	sv.pending = false // its messages are in this period's results
	if len(sv.results) == 0 {
		return nil
	}
	w.msgs = w.msgs[:0]
	for _, m := range sv.results {
		if c.codecIndex != payload.Carrier {
			var err error
			if m, err = payload.Transcode(m, c.codecIndex); err != nil {
				return c.internal(fmt.Errorf("server: a view's result: %w", err))
			}
		}
		w.msgs = append(w.msgs, m)
	}
	if sub.changes != nil {
		if w.msgs = sub.changes.filter(w.msgs); len(w.msgs) == 0 {
			clear(sv.results)
			return nil
		}
	}
	err := c.sendResults(w, sub, w.msgs)
	clear(w.msgs)
	clear(sv.results)
	return err
}

// sendResults sends a period's results as data PDUs of at most
// maxBatchBytes of messages each (at least one message), as send bounds
// the channel's own batches, all at the period's position: a period of
// 10,000 groups is many PDUs, not one of unbounded size.
func (c *conn) sendResults(w *writer, sub *subscription, msgs [][]byte) error {
	for len(msgs) > 0 {
		n, size := 0, 0
		for n < len(msgs) && (n == 0 || size+len(msgs[n]) <= maxBatchBytes) {
			size += len(msgs[n])
			n++
		}
		w.pdu = c.codec.AppendData(w.pdu[:0], sub.id, sub.view.next, msgs[:n])
		c.srv.counters.MessagesOut[c.codecIndex].Add(uint64(n))
		c.traffic.MessagesOut.Add(uint64(n))
		if err := c.write(w, w.pdu); err != nil {
			return err
		}
		msgs = msgs[n:]
	}
	return nil
}

// viewMessages appends to w.msgs, encoded for codec ci, what the view
// makes of frames: nothing for a message it drops. A SELECT * keeps the
// encodings the payload holds; a projection is msgpack, transcoded for
// other codecs (one allocation per message and subscriber). A message
// the view gives up on (view.ErrBudget) ends it: w.msgs holds what the
// view made of those before, and the error is a *viewBudgetError.
// Once gone is closed (the connection ends) it stops between messages,
// with errGone.
func (sv *subscriptionView) viewMessages(w *writer, frames []store.Frame, ci int, gone <-chan struct{}) error {
	if sh := sv.share; sh != nil && sh.shared() {
		return sv.viewShared(w, frames, ci, sh, gone)
	}
	sv.buf, sv.outs = sv.buf[:0], sv.outs[:0]
	all := sv.v.SelectsAll()
	var over error
	for i := range frames {
		if isClosed(gone) {
			return errGone
		}
		f := &frames[i]
		m, err := payload.Encoding(f.Data, payload.Carrier)
		if err != nil || len(m) == 0 {
			return fmt.Errorf("%w: a view needs the carrier", payload.ErrCorrupt)
		}
		if all {
			if sv.ev.Match(m) {
				if m, err = payload.In(f.Data, ci); err != nil {
					return err
				}
				w.msgs = append(w.msgs, m)
			}
		} else if out, ok := sv.ev.Append(sv.buf, m); ok {
			// Projections go one after the other into buf; they are
			// sliced once all are there, since buf may move as it grows.
			sv.buf = out
			sv.outs = append(sv.outs, len(out))
		}
		if sv.ev.Err() != nil {
			over = &viewBudgetError{offset: f.Offset}
			break
		}
	}
	from := 0
	for _, to := range sv.outs {
		m := sv.buf[from:to:to]
		from = to
		if ci != payload.Carrier {
			var err error
			if m, err = payload.Transcode(m, ci); err != nil {
				return fmt.Errorf("server: a view's projection: %w", err)
			}
		}
		w.msgs = append(w.msgs, m)
	}
	return over
}

// viewShared is viewMessages for a statement that other subscriptions of
// the channel use too: each message's result is taken from the share when
// another writer made it for this codec, else made and left there.
func (sv *subscriptionView) viewShared(w *writer, frames []store.Frame, ci int, sh *viewShare, gone <-chan struct{}) error {
	all := sv.v.SelectsAll()
	for i := range frames {
		f := &frames[i]
		r := sh.get(f, ci)
		if r == nil {
			if isClosed(gone) {
				return errGone
			}
			m, keep, err := sv.viewOne(f, ci, all)
			over := errors.Is(err, view.ErrBudget)
			if err != nil && !over {
				return err
			}
			r = &viewResult{msg: m, keep: keep, over: over}
			sh.put(f, ci, r)
		}
		if r.over {
			return &viewBudgetError{offset: f.Offset}
		}
		if r.keep {
			w.msgs = append(w.msgs, r.msg)
		}
	}
	return nil
}

// viewOne is what the view makes of f for codec ci, in memory of its own
// (a projection) or the frame's (SELECT *), and whether it keeps it; the
// error is view.ErrBudget when the view gave up on it.
func (sv *subscriptionView) viewOne(f *store.Frame, ci int, all bool) ([]byte, bool, error) {
	m, err := payload.Encoding(f.Data, payload.Carrier)
	if err != nil || len(m) == 0 {
		return nil, false, fmt.Errorf("%w: a view needs the carrier", payload.ErrCorrupt)
	}
	if all {
		if !sv.ev.Match(m) {
			return nil, false, sv.ev.Err()
		}
		p, err := payload.In(f.Data, ci)
		return p, err == nil, err
	}
	out, ok := sv.ev.Append(nil, m)
	if !ok {
		return nil, false, sv.ev.Err()
	}
	if ci != payload.Carrier {
		if out, err = payload.Transcode(out, ci); err != nil {
			return nil, false, fmt.Errorf("server: a view's projection: %w", err)
		}
	}
	return out, true, nil
}

// Package filter runs the stream views of rtm/subscribe's filter: a
// subscription with a filter (a SQL statement, compiled by edge/view)
// gets the channel's messages through the view: WHERE drops, the select
// list projects. The view runs on the stored carrier (msgpack, see
// edge/payload) of each message, in the subscription's writer, which
// owns its View: compiling once per subscription, evaluating once per
// message and statement when several subscriptions of the channel use
// it (they share the results, share.go), else once per message. History
// and catch-up go through it too; a data PDU's position stays the
// channel's position after its batch.
//
// An aggregate view (COUNT, GROUP BY, MERGE...) counts the messages as
// the writer reads them and sends one message per group at the end of
// each period, as one data PDU whose position is the channel's after the
// last message counted; a period with no input sends nothing. History
// counts into the first period.
//
// A view gives up on a message that would cost more than view.Budget to
// evaluate (budget.go): the subscription ends there.
package filter

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/rtm"
)

// View is a subscription's compiled view. Its methods are its writer's,
// unless they say otherwise.
type View struct {
	v  *view.View
	ev *view.Evaluator
	// sharing is the statement's results shared with the channel's other
	// subscriptions of it (share.go); none for an aggregate view.
	sharing sharing
	// buf holds one batch's projections; outs are their ends in it.
	buf  []byte
	outs []int
	// over says the view gave up on a message (view.ErrBudget) and the
	// subscription ended: nothing more is evaluated.
	over bool
	agg  *aggregate // an aggregate view's periods; nil for a simple view
}

// sharing is where a simple view's results are shared.
type sharing struct {
	share  *share
	shares *Shares // where share came from
	once   sync.Once
}

// aggregate is an aggregate view's counting and periods. The ticker
// goroutine sets due and wakes the writer; the rest is the writer's.
type aggregate struct {
	a        *view.Aggregate
	period   time.Duration
	due      atomic.Bool
	stopOnce sync.Once
	done     chan struct{} // closed by Stop: the ticker ends
	next     rtm.Position  // after the last message counted
	results  [][]byte
	// pending says the period being counted has input; from is then the
	// position of its first message, where a subscription ended now
	// resumes, since nothing of the period was sent.
	pending bool
	from    rtm.Position
}

// Compile checks and compiles the filter of a subscribe body, and
// returns the view and the channel it reads (the FROM clause). Its
// refusals are *rtm.Error.
func Compile(b *rtm.SubscribeBody) (*View, string, error) {
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
	sv := &View{v: v, ev: v.NewEvaluator()}
	if v.Aggregates() {
		sv.agg = &aggregate{a: v.NewAggregate(), period: period, done: make(chan struct{})}
	}
	return sv, v.Channel(), nil
}

// Aggregates reports whether the view is an aggregate one, whose
// results are sent at the end of each period (Due, Results).
func (sv *View) Aggregates() bool { return sv.agg != nil }

// Start runs an aggregate view's period ticker, which wakes w (the
// subscription's connection) at the end of each period, until Stop. For
// the connection's reader, once the subscription is live.
func (sv *View) Start(w store.Waker) {
	if sv.agg == nil {
		return
	}
	a := sv.agg
	go func() {
		t := time.NewTicker(a.period)
		defer t.Stop()
		for {
			select {
			case <-a.done:
				return
			case <-t.C:
				a.due.Store(true)
				w.Wake()
			}
		}
	}()
}

// Stop ends the ticker, if any. Idempotent; any goroutine.
func (sv *View) Stop() {
	if a := sv.agg; a != nil {
		a.stopOnce.Do(func() { close(a.done) })
	}
}

// Join makes a simple view share its results with the other
// subscriptions of its statement on the channel of store key key. For
// the connection's reader, before the subscription is live.
func (sv *View) Join(vs *Shares, key, statement string) {
	if sv.agg == nil {
		sv.sharing.share, sv.sharing.shares = vs.acquire(key+"\x00"+statement), vs
	}
}

// Leave gives the share back. Idempotent; any goroutine.
func (sv *View) Leave() {
	if s := &sv.sharing; s.share != nil {
		s.once.Do(func() { s.shares.release(s.share) })
	}
}

// Over reports whether the view gave up on a message (MarkOver): nothing
// more is evaluated, nor sent.
func (sv *View) Over() bool { return sv.over }

// MarkOver records that the view gave up on a message and its
// subscription ends.
func (sv *View) MarkOver() { sv.over = true }

// Resume returns, for an aggregate view with a period under way, the
// position of the period's first message: nothing of it was sent yet,
// so a subscription resumed there counts it again. ok is false
// otherwise. The writer's, or before the subscription is live.
func (sv *View) Resume() (from rtm.Position, ok bool) {
	if a := sv.agg; a != nil && a.pending {
		return a.from, true
	}
	return rtm.Position{}, false
}

// Next is the channel's position after the last message an aggregate
// view counted: the position of the data PDUs of its results.
func (sv *View) Next() rtm.Position { return sv.agg.next }

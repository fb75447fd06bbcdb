package server

import (
	"fmt"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Stream views: an rtm/subscribe with a filter (a SQL statement, see
// edge/view) gets the channel's messages through the view: WHERE drops,
// the select list projects. The view runs on the stored carrier (msgpack)
// of each message, in the subscription's writer, which owns its
// Evaluator: compiling once per subscription, evaluating once per message
// and subscriber. History and catch-up go through it too; a data PDU's
// position stays the channel's position after its batch.
//
// Aggregate views (COUNT, GROUP BY, MERGE...) are refused for now.

// subscriptionView is a subscription's compiled view.
type subscriptionView struct {
	v  *view.View
	ev *view.Evaluator // the writer's alone
	// buf holds one batch's projections; outs are their ends in it.
	buf  []byte
	outs []int
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
	if v.Aggregates() {
		return nil, "", rtm.Errorf(rtm.CodeInvalidFilter, "aggregate views (COUNT, SUM, GROUP BY, MERGE, ...) are not supported by this edge yet; a filter without them is")
	}
	if _, err := view.Period(b.Period); err != nil {
		return nil, "", rtm.Errorf(rtm.CodeInvalidFormat, "period: %v", err)
	}
	return &subscriptionView{v: v, ev: v.NewEvaluator()}, v.Channel(), nil
}

// viewMessages appends to w.msgs, encoded for codec ci, what the view
// makes of frames: nothing for a message it drops. A SELECT * keeps the
// encodings the payload holds; a projection is msgpack, transcoded for
// other codecs (one allocation per message and subscriber).
func (sv *subscriptionView) viewMessages(w *writer, frames []store.Frame, ci int) error {
	sv.buf, sv.outs = sv.buf[:0], sv.outs[:0]
	all := sv.v.SelectsAll()
	for _, f := range frames {
		m, err := encodingAt(f.Data, carrier)
		if err != nil || len(m) == 0 {
			return fmt.Errorf("%w: a view needs the carrier", errPayload)
		}
		if all {
			if sv.ev.Match(m) {
				if m, err = payloadFor(f.Data, ci); err != nil {
					return err
				}
				w.msgs = append(w.msgs, m)
			}
			continue
		}
		// Projections go one after the other into buf; they are sliced
		// once all are there, since buf may move as it grows.
		if out, ok := sv.ev.Append(sv.buf, m); ok {
			sv.buf = out
			sv.outs = append(sv.outs, len(out))
		}
	}
	from := 0
	for _, to := range sv.outs {
		m := sv.buf[from:to:to]
		from = to
		if ci != carrier {
			var err error
			if m, err = transcodeCarrier(m, ci); err != nil {
				return fmt.Errorf("server: a view's projection: %w", err)
			}
		}
		w.msgs = append(w.msgs, m)
	}
	return nil
}

package filter

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Count adds frames to an aggregate view's period; next is the channel's
// position after them. It stops with ErrGone once gone is closed, and
// with view.ErrBudget when the view gave up on a message.
func (sv *View) Count(frames []store.Frame, next rtm.Position, gone <-chan struct{}) error {
	a := sv.agg
	if !a.pending && len(frames) > 0 {
		a.pending, a.from = true, rtm.Position{Epoch: next.Epoch, Offset: frames[0].Offset}
	}
	for _, f := range frames {
		if isClosed(gone) {
			return ErrGone
		}
		m, err := payload.Encoding(f.Data, payload.Carrier)
		if err != nil || len(m) == 0 {
			return fmt.Errorf("%w: a view needs the carrier", payload.ErrCorrupt)
		}
		if !a.a.Add(m) {
			if err := a.a.Err(); err != nil {
				return err
			}
		}
	}
	a.next = next
	return nil
}

// Due reports, once per period, whether an aggregate view's period has
// ended, so that its results are to be sent (Results).
func (sv *View) Due() bool {
	return sv.agg != nil && !sv.over && sv.agg.due.Swap(false)
}

// Results appends to msgs, encoded for codec ci, the groups of the
// period that ended, and starts the next period. An error of the
// aggregate's (view.ErrBudget, say) leaves the period pending, so that
// the subscription ends at its first message (Resume).
func (sv *View) Results(msgs [][]byte, ci int) ([][]byte, error) {
	a := sv.agg
	a.results = a.a.Flush(a.results[:0])
	defer clear(a.results) // msgs holds what is to be sent
	if err := a.a.Err(); err != nil {
		return msgs, err
	}
	a.pending = false // its messages are in this period's results
	for _, m := range a.results {
		if ci != payload.Carrier {
			var err error
			if m, err = payload.Transcode(m, ci); err != nil {
				return msgs, fmt.Errorf("filter: a view's result: %w", err)
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Messages appends to msgs, encoded for codec ci, what the view makes of
// frames: nothing for a message it drops. A SELECT * keeps the
// encodings the payload holds; a projection is msgpack, transcoded for
// other codecs (one allocation per message and subscriber). A message
// the view gives up on (view.ErrBudget) ends it: msgs holds what the
// view made of those before, and the error is a *BudgetError. Once gone
// is closed (the connection ends) it stops between messages, with
// ErrGone.
func (sv *View) Messages(msgs [][]byte, frames []store.Frame, ci int, gone <-chan struct{}) ([][]byte, error) {
	if sh := sv.sharing.share; sh != nil && sh.shared() {
		return sv.messagesShared(msgs, frames, ci, sh, gone)
	}
	sv.buf, sv.outs = sv.buf[:0], sv.outs[:0]
	all := sv.v.SelectsAll()
	var over error
	for i := range frames {
		if isClosed(gone) {
			return msgs, ErrGone
		}
		f := &frames[i]
		m, err := payload.Encoding(f.Data, payload.Carrier)
		if err != nil || len(m) == 0 {
			return msgs, fmt.Errorf("%w: a view needs the carrier", payload.ErrCorrupt)
		}
		if all {
			if sv.ev.Match(m) {
				if m, err = payload.In(f.Data, ci); err != nil {
					return msgs, err
				}
				msgs = append(msgs, m)
			}
		} else if out, ok := sv.ev.Append(sv.buf, m); ok {
			// Projections go one after the other into buf; they are
			// sliced once all are there, since buf may move as it grows.
			sv.buf = out
			sv.outs = append(sv.outs, len(out))
		}
		if sv.ev.Err() != nil {
			over = &BudgetError{Offset: f.Offset}
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
				return msgs, fmt.Errorf("filter: a view's projection: %w", err)
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, over
}

// messagesShared is Messages for a statement that other subscriptions of
// the channel use too: each message's result is taken from the share
// when another writer made it for this codec, else made and left there.
func (sv *View) messagesShared(msgs [][]byte, frames []store.Frame, ci int, sh *share, gone <-chan struct{}) ([][]byte, error) {
	all := sv.v.SelectsAll()
	for i := range frames {
		f := &frames[i]
		r := sh.get(f, ci)
		if r == nil {
			if isClosed(gone) {
				return msgs, ErrGone
			}
			m, keep, err := sv.one(f, ci, all)
			over := errors.Is(err, view.ErrBudget)
			if err != nil && !over {
				return msgs, err
			}
			r = &result{msg: m, keep: keep, over: over}
			sh.put(f, ci, r)
		}
		if r.over {
			return msgs, &BudgetError{Offset: f.Offset}
		}
		if r.keep {
			msgs = append(msgs, r.msg)
		}
	}
	return msgs, nil
}

// one is what the view makes of f for codec ci, in memory of its own (a
// projection) or the frame's (SELECT *), and whether it keeps it; the
// error is view.ErrBudget when the view gave up on it.
func (sv *View) one(f *store.Frame, ci int, all bool) ([]byte, bool, error) {
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
			return nil, false, fmt.Errorf("filter: a view's projection: %w", err)
		}
	}
	return out, true, nil
}

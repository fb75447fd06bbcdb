package server

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/view"
	"github.com/sluicehq/sluice/shared/rtm"
)

// A view gives up on a message that would cost more than view.Budget to
// evaluate (a LIKE whose pattern comes from the message, say): the
// subscription ends with rtm/subscription/error invalid_filter at that
// message, after what the view made of the messages before it. The next
// message could cost the same, and a writer spending seconds of CPU per
// message would starve the edge's other subscribers; the budget bounds
// what one message costs, so the work also stops soon after the
// subscriber is gone. Subscriptions sharing the statement's results
// (viewshare.go) take the verdict from the share and end without
// evaluating again.

// errGone stops a view's evaluation between messages once the
// connection ends: the rest of a batch is not worth the CPU.
var errGone = errors.New("server: the connection is closing")

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// budgetReason is the reason of the rtm/subscription/error.
var budgetReason = "the filter exceeded its per-message evaluation budget (" +
	strconv.Itoa(view.Budget) + " work units) on the message at this position; subscribe with a simpler filter"

// viewBudgetError is a view giving up on the message at offset.
type viewBudgetError struct{ offset uint64 }

func (e *viewBudgetError) Error() string {
	return fmt.Sprintf("server: the view gave up on the message at offset %d: %v", e.offset, view.ErrBudget)
}

func (e *viewBudgetError) Unwrap() error { return view.ErrBudget }

// framesBefore returns the frames before the one at offset.
func framesBefore(frames []store.Frame, offset uint64) []store.Frame {
	for i := range frames {
		if frames[i].Offset == offset {
			return frames[:i]
		}
	}
	return frames
}

// endView ends sub, whose view gave up on the message at pos because
// evaluating it would cost more than view.Budget, and tells the client;
// errGone is returned as it is, any other error is internal.
func (c *conn) endView(w *writer, sub *subscription, err error, pos rtm.Position) error {
	switch {
	case errors.Is(err, errGone):
		return err
	case !errors.Is(err, view.ErrBudget):
		return c.internal(err)
	}
	sub.view.over = true
	c.srv.log.Info("a view exceeded its evaluation budget; subscription ended", "remote", c.remote,
		"subscription", sub.id, "channel", sub.channel, "position", pos.String())
	c.endSub(sub)
	return c.writePDU(w, &rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
		Error: string(rtm.CodeInvalidFilter), Reason: budgetReason,
		Position: pos.String(), SubscriptionID: sub.id,
	}})
}

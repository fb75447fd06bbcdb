package filter

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/view"
)

// A view gives up on a message that would cost more than view.Budget to
// evaluate (a LIKE whose pattern comes from the message, say): the
// subscription ends with rtm/subscription/error invalid_filter at that
// message, after what the view made of the messages before it. The next
// message could cost the same, and a writer spending seconds of CPU per
// message would starve the edge's other subscribers; the budget bounds
// what one message costs, so the work also stops soon after the
// subscriber is gone. Subscriptions sharing the statement's results
// (share.go) take the verdict from the share and end without evaluating
// again.

// ErrGone stops a view's evaluation between messages once the
// connection ends: the rest of a batch is not worth the CPU.
var ErrGone = errors.New("filter: the connection is closing")

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// BudgetReason is the reason of the rtm/subscription/error that ends a
// subscription whose view gave up on a message.
var BudgetReason = "the filter exceeded its per-message evaluation budget (" +
	strconv.Itoa(view.Budget) + " work units) on the message at this position; subscribe with a simpler filter"

// BudgetError is a view giving up on the message at Offset.
type BudgetError struct{ Offset uint64 }

func (e *BudgetError) Error() string {
	return fmt.Sprintf("filter: the view gave up on the message at offset %d: %v", e.Offset, view.ErrBudget)
}

func (e *BudgetError) Unwrap() error { return view.ErrBudget }

// FramesBefore returns the frames before the one at offset.
func FramesBefore(frames []store.Frame, offset uint64) []store.Frame {
	for i := range frames {
		if frames[i].Offset == offset {
			return frames[:i]
		}
	}
	return frames
}

package delivery

import (
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Subscription is one live subscription. Its session makes it and hands
// it over (Conn.HandOver); from then on only the writer reads its
// cursor, its catch-up and its view.
type Subscription struct {
	ID      string
	Channel string
	Cursor  *store.Cursor
	CatchUp *chanlog.CatchUp // history read from the log before the cursor; nil: none
	Options
	View *filter.View // the filter's, or nil
	// Since is the store's clock when the subscription was made: messages
	// stored from then on reach it live, older ones are history
	// (observeFirst).
	Since int64
	// Vacate uncounts the subscription from its channel's occupancy
	// (hook.Occupancy); nil for an app without events.
	Vacate func()
	prefixLink
	delta *subDelta // of a delta subscription (Engine.WantDeltas); nil: none
}

// Options are what the client asked of a subscription beside its
// channel and start.
type Options struct {
	FastForward bool
	Batch       int           // most messages per data PDU; 0: no limit (at most MaxBatchMessages)
	Changes     *ValueChanges // only: value_changes, or nil; the writer's
	Presence    bool          // watches the channel's members (the presence extension)
}

// prefixLink ties the subscriptions of a prefix subscription together
// (prefix.go): the parent has group; each child has of, its parent; both
// have named (data PDUs name the channel).
type prefixLink struct {
	group *prefixGroup
	of    *Subscription
	named bool
	retry *logRetry // a failed log read's streak (logretry.go); nil: none
}

// prefixed reports whether s is a prefix subscription or one of its
// channels.
func (s *Subscription) prefixed() bool { return s.group != nil || s.of != nil }

// Delta reports whether s gets deltas (Engine.WantDeltas).
func (s *Subscription) Delta() bool { return s.delta != nil }

// EndDeltas leaves the channel's deltas of a subscription that is never
// handed over; Close does it for the others. Idempotent.
func (s *Subscription) EndDeltas() { s.delta.close() }

// Prefix reports whether s is a prefix subscription (StartPrefix).
func (s *Subscription) Prefix() bool { return s.group != nil }

// MaxBatchMessages bounds the batch option: past it, the writer's own
// batches are smaller anyway.
const MaxBatchMessages = 1 << 16

// Close closes the subscription's cursor, its prefix's children and its
// view, and vacates its channel. Idempotent.
func (s *Subscription) Close() {
	s.Cursor.Close()
	if s.group != nil {
		s.group.close()
	}
	if s.View != nil {
		s.View.Stop()
		s.View.Leave()
	}
	if s.Vacate != nil {
		s.Vacate()
	}
	s.delta.close()
}

// Position returns where the subscription reads next: for an aggregate
// view with a period under way, the period's first message, since
// nothing of it was sent yet (a subscription resumed there counts it
// again). The writer's, or before the subscription is live.
func (s *Subscription) Position() rtm.Position {
	if v := s.View; v != nil {
		if from, ok := v.Resume(); ok {
			return from
		}
	}
	if cu := s.CatchUp; cu != nil {
		return rtm.Position{Epoch: s.Cursor.Position().Epoch, Offset: cu.Next()}
	}
	return s.Cursor.Position()
}

package client

import (
	"github.com/sluicehq/sluice/shared/rtm"
)

// Gap tells a subscription's application that messages may have been
// missed: the subscription carries on, but not from where it was. It
// comes, on the delivery goroutine and in order with the messages, before
// the first message after the gap.
//
// The common cause is a reconnect whose position is gone: the edge
// restarted without persistence (a new epoch), the client moved to an
// edge without this history, or the connection stayed down longer than
// the channel's retention. Unless SubscribeOptions.Strict is set, the
// client then subscribes again with fast_forward and carries on from the
// oldest message the edge still has. The other cause is the edge
// fast-forwarding a subscription that fell behind (see
// SubscribeOptions.FastForward).
type Gap struct {
	// SubscriptionID and Channel name the subscription.
	SubscriptionID, Channel string
	// Requested is where the subscription would have continued: the
	// position after the last message the client queued for the handler
	// (or the position Subscribe was given). The messages from there up
	// to Resumed may be lost.
	Requested rtm.Position
	// Resumed is where the subscription carries on: the oldest message the
	// edge holds.
	Resumed rtm.Position
	// MissedMessageCount is how many messages the edge skipped when it
	// knows (a subscription that fell behind); 0 when it cannot know, as
	// after a reconnect to a position it no longer has.
	MissedMessageCount uint64
	// Reason is the edge's explanation, for people.
	Reason string
}

// gapOf describes the gap an rtm/subscription/info fast_forward reports:
// it went from asked (the position last requested of the edge, when the
// notice answers that request) or else from next (where the subscription
// was reading) to the notice's position.
func gapOf(s *Subscription, info *rtm.SubscriptionInfo, asked *rtm.Position, next, resumed rtm.Position) Gap {
	from := next
	if asked != nil {
		from = *asked
	}
	return Gap{
		SubscriptionID:     s.id,
		Channel:            s.channel,
		Requested:          from,
		Resumed:            resumed,
		MissedMessageCount: info.MissedMessageCount,
		Reason:             info.Reason,
	}
}

// carriesOn reports whether a subscription refused err on a resubscription
// after a reconnect is subscribed again with fast_forward instead of
// ending: the default, unless Strict. A FastForward subscription already
// asked the edge for it, so a refusal is final.
func (s *Subscription) carriesOn(err *rtm.Error) bool {
	return err.Code == rtm.CodeExpiredPosition && !s.opts.Strict && !s.opts.FastForward
}

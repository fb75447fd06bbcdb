package session

import (
	"errors"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// subscribe serves rtm/subscribe. The ok reply and the hand-over of the
// cursor to the writer happen under one lock, so the reply always precedes
// the subscription's first data.
func (c *Session) subscribe(env *rtm.Envelope) (any, error) {
	var b rtm.SubscribeBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	var sv *filter.View
	if b.Filter != "" {
		var err error
		if sv, b.Channel, err = filter.Compile(&b); err != nil {
			return nil, err
		}
	} else if b.Period != 0 {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "period applies to a subscription with a filter")
	}
	if err := CheckChannel(b.Channel); err != nil {
		return nil, err
	}
	if b.Batch < 0 {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "batch must not be negative")
	}
	if err := checkSubscribeOptions(&b); err != nil {
		return nil, err
	}
	if b.Prefix {
		if err := checkPrefix(&b); err != nil {
			return nil, err
		}
	}
	id := b.SubscriptionID
	if id == "" {
		id = b.Channel
	}
	if b.Prefix && !c.perms.CanSubscribePrefix(b.Channel) {
		return nil, c.denied(env.Action, "subscribe to every channel starting with", b.Channel)
	}
	if !c.perms.CanSubscribe(b.Channel) {
		return nil, c.denied(env.Action, "subscribe to", b.Channel)
	}
	if b.Presence && !c.perms.CanPresence(b.Channel) {
		return nil, c.denied(env.Action, "see the presence of", b.Channel)
	}
	if err := c.checkQuota(id, b.Force); err != nil {
		return nil, err
	}
	if err := c.askSubscribe(b.Channel, id); err != nil {
		return nil, err
	}
	start, err := subscribeStart(&b)
	if err != nil {
		return nil, err
	}
	key := c.app.StoreKey(b.Channel)
	// Before the cursor, on the clock of Frame.Time: what is stored from
	// now on is live to this subscription.
	since := c.edge.Store.Stamp()
	cur, cu, err := c.edge.ChanLog.Subscribe(c.Context(), key, start) // cu: history to read from the log first
	var info []byte                                                   // a fast_forward notice to send after the ok reply
	if errors.Is(err, store.ErrExpired) && b.FastForward {
		cur, cu, info, err = c.fastForwardStart(key, id, b.Position)
	}
	if err != nil {
		return nil, ExpiredOr(err, b.Position)
	}
	sub := &delivery.Subscription{ID: id, Channel: b.Channel, Cursor: cur, CatchUp: cu, Since: since, View: sv,
		Options: delivery.Options{FastForward: b.FastForward, Batch: int(min(b.Batch, delivery.MaxBatchMessages)), Presence: b.Presence}}
	if b.Only == rtm.OnlyValueChanges {
		sub.Changes = &delivery.ValueChanges{}
	}
	if b.Delta {
		c.edge.Engine.WantDeltas(sub, key)
	}
	if b.Prefix {
		if err := c.StartPrefix(sub, key, start); err != nil {
			cur.Close()
			return nil, err
		}
	}
	c.occupy(sub) // before the writer has it, which may end it
	if sv != nil {
		sv.Join(c.edge.Views, key, b.Filter)
	}
	if err := c.handOver(sub, env.ID, b.Force, info); err != nil {
		if sub.Vacate != nil {
			sub.Vacate()
		}
		if sv != nil {
			sv.Leave()
		}
		return nil, err
	}
	c.pres.Sync()
	if sv != nil {
		sv.Start(c)
	}
	return nil, nil
}

// fastForwardStart serves a subscribe with fast_forward at a position
// whose messages are gone (expired, or of another history, as after a move
// to another edge): like a subscriber that fell behind, it goes on from the
// oldest stored message, and is told so with rtm/subscription/info. The
// edge cannot tell how many messages were missed: the count is 0.
func (c *Session) fastForwardStart(key, id, from string) (*store.Cursor, *chanlog.CatchUp, []byte, error) {
	cur, cu, err := c.edge.ChanLog.Oldest(c.Context(), key)
	if err != nil {
		return nil, nil, nil, err
	}
	sub := delivery.Subscription{Cursor: cur, CatchUp: cu}
	c.edge.Counters.FastForward.Add(1)
	info, err := c.Codec().AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionInfo, Body: &rtm.SubscriptionInfo{
		Info:           rtm.InfoFastForward,
		Reason:         "the messages after position " + from + " are gone; skipped to the oldest stored message",
		Position:       sub.Position().String(),
		SubscriptionID: id,
	}})
	if err != nil {
		cur.Close()
		return nil, nil, nil, err
	}
	return cur, cu, info, nil
}

// checkQuota refuses a live id without force, and a subscription past the
// per-connection limit.
func (c *Session) checkQuota(id string, force bool) error {
	live, n := c.Lookup(id)
	if live && !force {
		return &rtm.Error{Code: rtm.CodeAlreadySubscribed,
			Reason:         "subscription id " + id + " is live; unsubscribe, pass force, or choose another subscription_id",
			SubscriptionID: id}
	}
	if !live && n >= c.edge.Limits.SubscriptionsPerConnection {
		return rtm.Errorf(rtm.CodeSubscriptionQuotaExceeded, "at most %d subscriptions per connection",
			c.edge.Limits.SubscriptionsPerConnection)
	}
	return nil
}

// subscribeStart turns position or history into a store start point.
func subscribeStart(b *rtm.SubscribeBody) (store.Start, error) {
	var s store.Start
	if b.Position != "" {
		p, err := parsePosition(b.Position)
		if err != nil {
			return s, err
		}
		s.Position = &p
		return s, nil
	}
	if h := b.History; h != nil {
		if h.Count != nil {
			if *h.Count < 0 {
				return s, rtm.Errorf(rtm.CodeInvalidFormat, "history.count must not be negative")
			}
			s.HistoryCount = int(min(*h.Count, 1<<30))
		}
		if h.Age != nil {
			if *h.Age < 0 {
				return s, rtm.Errorf(rtm.CodeInvalidFormat, "history.age must not be negative")
			}
			s.HistoryAge = time.Duration(min(*h.Age, 1<<31)) * time.Second
		}
	}
	return s, nil
}

// handOver makes sub live and queues its ok reply, then notice (if any)
// before any of its data; a forced subscribe ends the subscription it
// replaces first (delivery.Conn.HandOver).
func (c *Session) handOver(sub *delivery.Subscription, id rtm.ID, force bool, notice []byte) error {
	frame, err := c.Codec().AppendPDU(nil, &rtm.PDU{
		Action: rtm.Reply(rtm.ActionSubscribe, rtm.OutcomeOK), ID: id,
		Body: &rtm.SubscribeReply{Position: sub.Position().String(), SubscriptionID: sub.ID},
	})
	if err != nil {
		sub.Cursor.Close()
		sub.EndDeltas()
		return err
	}
	if id.IsZero() {
		frame = nil // no reply wanted
	}
	c.HandOver(sub, frame, notice, force)
	return nil
}

// unsubscribe serves rtm/unsubscribe. The writer closes the cursor and
// replies with the position the subscription would have read next.
func (c *Session) unsubscribe(env *rtm.Envelope) (any, error) {
	var b rtm.UnsubscribeBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if !c.Unsubscribe(b.SubscriptionID, env.ID) {
		return nil, &rtm.Error{Code: rtm.CodeNotSubscribed,
			Reason: "no live subscription with id " + b.SubscriptionID, SubscriptionID: b.SubscriptionID}
	}
	c.pres.Sync()
	c.MarkWakeDue()
	return nil, nil
}

// checkSubscribeOptions refuses a value of only the edge does not know.
func checkSubscribeOptions(b *rtm.SubscribeBody) error {
	if b.Only != "" && b.Only != rtm.OnlyValueChanges {
		return rtm.Errorf(rtm.CodeInvalidFormat, "only must be %q", rtm.OnlyValueChanges)
	}
	// A delta is against the previous message the subscription got,
	// computed once for every subscriber of the channel; a view,
	// value_changes or a prefix makes each subscription's previous its
	// own, and a view's messages are not the channel's.
	if b.Delta && (b.Filter != "" || b.Only != "" || b.Prefix) {
		return rtm.Errorf(rtm.CodeInvalidFormat, "delta applies to a plain subscription: no filter, only or prefix")
	}
	return nil
}

// checkPrefix refuses what a prefix subscription cannot take.
func checkPrefix(b *rtm.SubscribeBody) error {
	switch {
	case b.Filter != "":
		return rtm.Errorf(rtm.CodeInvalidFormat, "a prefix subscription takes no filter")
	case b.Position != "":
		return rtm.Errorf(rtm.CodeInvalidFormat, "a prefix subscription takes no position (positions are per channel); use history")
	}
	return nil
}

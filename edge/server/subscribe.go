package server

import (
	"errors"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// subscribe serves rtm/subscribe. The ok reply and the hand-over of the
// cursor to the writer happen under one lock, so the reply always precedes
// the subscription's first data.
func (c *conn) subscribe(env *rtm.Envelope) (any, error) {
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
	if err := checkChannel(b.Channel); err != nil {
		return nil, err
	}
	if b.Batch < 0 {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "batch must not be negative")
	}
	if err := checkSubscribeOptions(&b); err != nil {
		return nil, err
	}
	if b.Prefix {
		if err := c.checkPrefix(&b); err != nil {
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
	since := c.srv.store.Stamp()
	cur, cu, err := c.srv.chlog.Subscribe(c.ctx, key, start) // cu: history to read from the log first
	var info []byte                                          // a fast_forward notice to send after the ok reply
	if errors.Is(err, store.ErrExpired) && b.FastForward {
		cur, cu, info, err = c.fastForwardStart(key, id, b.Position)
	}
	if err != nil {
		return nil, expiredOr(err, b.Position)
	}
	sub := &subscription{id: id, channel: b.Channel, cursor: cur, catchup: cu, fastForward: b.FastForward,
		batch: int(min(b.Batch, maxBatchMessages)), since: since, view: sv, presence: b.Presence}
	if b.Only == rtm.OnlyValueChanges {
		sub.changes = &valueChanges{}
	}
	if b.Prefix {
		if err := c.startPrefix(sub, start); err != nil {
			cur.Close()
			return nil, err
		}
	}
	c.occupy(sub) // before the writer has it, which may end it
	if sv != nil {
		sv.Join(&c.srv.views, key, b.Filter)
	}
	if err := c.handOver(sub, env.ID, b.Force, info); err != nil {
		if sub.vacate != nil {
			sub.vacate()
		}
		if sv != nil {
			sv.Leave()
		}
		return nil, err
	}
	c.syncPresence()
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
func (c *conn) fastForwardStart(key, id, from string) (*store.Cursor, *chanlog.CatchUp, []byte, error) {
	cur, cu, err := c.srv.chlog.Oldest(c.ctx, key)
	if err != nil {
		return nil, nil, nil, err
	}
	sub := subscription{cursor: cur, catchup: cu}
	c.srv.counters.FastForward.Add(1)
	info, err := c.codec.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionInfo, Body: &rtm.SubscriptionInfo{
		Info:           rtm.InfoFastForward,
		Reason:         "the messages after position " + from + " are gone; skipped to the oldest stored message",
		Position:       sub.position().String(),
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
func (c *conn) checkQuota(id string, force bool) error {
	c.mu.Lock()
	live := c.subLocked(id) != nil
	n := len(c.live)
	c.mu.Unlock()
	if live && !force {
		return &rtm.Error{Code: rtm.CodeAlreadySubscribed,
			Reason:         "subscription id " + id + " is live; unsubscribe, pass force, or choose another subscription_id",
			SubscriptionID: id}
	}
	if !live && n >= c.srv.limits.SubscriptionsPerConnection {
		return rtm.Errorf(rtm.CodeSubscriptionQuotaExceeded, "at most %d subscriptions per connection",
			c.srv.limits.SubscriptionsPerConnection)
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
// replaces first. The replies go past the queue's byte check, in the same
// step as the hand-over (outbox.pushUncheckedLocked says why).
func (c *conn) handOver(sub *subscription, id rtm.ID, force bool, notice []byte) error {
	frame, err := c.codec.AppendPDU(nil, &rtm.PDU{
		Action: rtm.Reply(rtm.ActionSubscribe, rtm.OutcomeOK), ID: id,
		Body: &rtm.SubscribeReply{Position: sub.position().String(), SubscriptionID: sub.id},
	})
	if err != nil {
		sub.cursor.Close()
		return err
	}
	c.mu.Lock()
	if old := c.subLocked(sub.id); old != nil && force {
		c.out.pushUncheckedLocked(outItem{end: old})
	} else {
		c.srv.counters.Subscriptions.Add(1)
	}
	c.setSubLocked(sub)
	if !id.IsZero() {
		c.out.pushUncheckedLocked(outItem{frame: frame})
	}
	if notice != nil {
		c.out.pushUncheckedLocked(outItem{frame: notice})
	}
	c.mu.Unlock()
	c.markWakeDue()
	return nil
}

// unsubscribe serves rtm/unsubscribe. The writer closes the cursor and
// replies with the position the subscription would have read next.
func (c *conn) unsubscribe(env *rtm.Envelope) (any, error) {
	var b rtm.UnsubscribeBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	c.mu.Lock()
	sub := c.subLocked(b.SubscriptionID)
	ok := sub != nil
	if ok {
		c.dropSubLocked(sub)
		c.srv.counters.Subscriptions.Add(-1)
		c.out.pushUncheckedLocked(outItem{end: sub, id: env.ID, reply: !env.ID.IsZero()})
	}
	c.mu.Unlock()
	if !ok {
		return nil, &rtm.Error{Code: rtm.CodeNotSubscribed,
			Reason: "no live subscription with id " + b.SubscriptionID, SubscriptionID: b.SubscriptionID}
	}
	c.syncPresence()
	c.markWakeDue()
	return nil, nil
}

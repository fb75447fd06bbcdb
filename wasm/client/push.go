package client

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// onPush routes a PDU without id, on the reader goroutine of cn. It never
// blocks: data that does not fit the delivery buffer is dropped and its
// subscription resubscribed later (see the package documentation).
func (c *Client) onPush(cn *conn, env rtm.Envelope, size int) {
	switch env.Action {
	case rtm.ActionSubscriptionData:
		var d rtm.SubscriptionData
		if c.decodePush(cn, env, &d) {
			var bad *string // the position's text when it does not parse
			pos, err := rtm.ParsePosition(d.Position)
			if err != nil {
				bad = &d.Position
			}
			c.takeData(cn, d.SubscriptionID, d.Channel, pos, bad, d.Messages, d.Delta, size)
		}
	case rtm.ActionSubscriptionInfo:
		var info rtm.SubscriptionInfo
		if c.decodePush(cn, env, &info) {
			c.onInfo(cn, &info)
		}
	case rtm.ActionSubscriptionPresence:
		var p rtm.SubscriptionPresence
		if c.decodePush(cn, env, &p) {
			c.onPresence(cn, &p)
		}
	case rtm.ActionSubscriptionErr:
		var se rtm.SubscriptionError
		if c.decodePush(cn, env, &se) {
			c.onSubscriptionError(cn, &se)
		}
	default:
		c.log.Debug("sluice client: ignored a push", "action", env.Action)
	}
}

// decodePush decodes a push body, logging what cannot be decoded.
func (c *Client) decodePush(cn *conn, env rtm.Envelope, v any) bool {
	if err := cn.codec.DecodeBody(env.Body, v); err != nil {
		c.log.Error("sluice client: undecodable push", "action", env.Action, "err", err)
		return false
	}
	return true
}

// routeLocked returns the subscription a push of cn is for, or nil when
// nobody takes it (unknown, ended, held on another connection, or lagging).
// The last one found is tried before the map: a connection's pushes tend
// to be for one subscription again and again. It is still the one of its
// id while it is on cn, since a subscription leaves c.subs (ended,
// replaced) only with its conn cleared.
func (c *Client) routeLocked(cn *conn, id string) *Subscription {
	s := cn.route
	if s == nil || s.conn != cn || s.id != id {
		s = c.subs[id]
		cn.route = s
	}
	if s == nil || s.conn != cn || s.lag || c.closed {
		return nil
	}
	return s
}

// onData takes a data push that the codec's DataDecoder read, on the
// reader goroutine. d is the reader's: it is valid only during the call,
// its messages excepted.
func (c *Client) onData(cn *conn, d *codec.Data, size int) {
	c.takeData(cn, d.SubscriptionID, "", d.Position, nil, d.Messages, false, size)
}

// takeData queues a batch of messages for the handler (or hands it over
// at once for a Direct subscription), or marks the subscription lagging
// when the buffer is full. badPos is the text of a position that did not
// parse, nil when pos is good. channel is the data's, for a prefix
// subscription ("" otherwise). delta says the messages are deltas
// (SubscribeOptions.Delta), applied here before anything else.
func (c *Client) takeData(cn *conn, id, channel string, pos rtm.Position, badPos *string, messages []any, delta bool, size int) {
	c.mu.Lock()
	s := c.routeLocked(cn, id)
	if s == nil {
		c.mu.Unlock()
		return
	}
	if s.opts.Delta || delta {
		if err := s.applyDeltasLocked(cn.codec, messages, delta); err != nil {
			// Resubscribed from before this batch, as after an overflow;
			// the edge sends its first message whole.
			c.log.Error("sluice client: resubscribing", "subscription_id", s.id, "err", err)
			s.lag = true
			c.signalWork()
			c.mu.Unlock()
			return
		}
	}
	if badPos != nil {
		// Deliver the messages, but keep the last good resume point.
		c.log.Error("sluice client: data with a bad position", "subscription_id", s.id, "position", *badPos)
		pos = s.next
	}
	s.asked = nil // the start was there: no fast_forward notice follows
	if s.opts.Direct {
		s.next = pos
		c.mu.Unlock()
		c.handData(s, messages, pos, channel)
		return
	}
	defer c.mu.Unlock()
	if c.overflowsLocked(size) {
		// Drop this batch and everything after it; the supervisor
		// resubscribes from s.next once the handlers caught up.
		s.lag = true
		c.signalWork()
		s.base = nil // the next message after the pause comes whole
		c.log.Info("sluice client: delivery buffer full, subscription paused", "subscription_id", s.id, "position", s.next.String())
		return
	}
	s.next = pos
	c.enqueueLocked(event{kind: evData, sub: s, messages: messages, pos: pos, size: size, channel: channel})
}

// onInfo moves the resume point to where the edge fast-forwarded and
// queues the notice for OnInfo and the Gap for OnGap (or runs them at
// once for a Direct subscription).
func (c *Client) onInfo(cn *conn, info *rtm.SubscriptionInfo) {
	pos, err := rtm.ParsePosition(info.Position)
	c.mu.Lock()
	s := c.routeLocked(cn, info.SubscriptionID)
	if s == nil {
		c.mu.Unlock()
		return
	}
	if err != nil {
		pos = s.next
	}
	gap := gapOf(s, info, s.asked, s.next, pos)
	s.next, s.asked = pos, nil
	if s.opts.Direct {
		c.mu.Unlock()
		c.handInfo(s, info, &gap, pos)
		return
	}
	c.enqueueLocked(event{kind: evInfo, sub: s, pos: pos, info: *info, gap: &gap})
	c.mu.Unlock()
}

// onSubscriptionError ends a subscription the edge ended (out_of_sync),
// but for unavailable (the edge could not read its history from the
// log now), which is resubscribed from its position as a paused one is.
//
// A paused subscription (its data dropped while the handlers catch up)
// is the exception for out_of_sync: that one is about the edge's read
// point, past data the client dropped, not about the client's own. The
// edge holds the subscription no more, which is what the pause wanted;
// it is resubscribed from the client's position once the buffer has
// drained, as every paused one is, and the edge answers for that
// position (expired_position, if it is gone too). So a handler slower
// than the retention ends with expired_position whichever of the edge's
// expiry and the client's unsubscribe came first.
func (c *Client) onSubscriptionError(cn *conn, se *rtm.SubscriptionError) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.subs[se.SubscriptionID]
	if s == nil || s.conn != cn {
		return
	}
	// unavailable: the edge could not read the history from its log now
	// and asks for a resubscribe from se.Position, the next message this
	// client has not queued; it does so, as for a lagging subscription,
	// but after a backoff delay (held), as for a refused resubscription:
	// the edge ends at once every subscription whose history its log did
	// not give, and the log may not be back yet.
	if code := rtm.Code(se.Error); s.lag && code == rtm.CodeOutOfSync || code == rtm.CodeUnavailable {
		s.lag, s.conn, s.held = true, nil, code == rtm.CodeUnavailable
		c.signalWork()
		return
	}
	c.failLocked(s, &rtm.Error{Code: rtm.Code(se.Error), Reason: se.Reason, Position: se.Position, SubscriptionID: se.SubscriptionID})
}

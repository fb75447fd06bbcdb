package client

import (
	"errors"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
)

// run is the supervisor goroutine: it owns the current connection, pings
// it, resubscribes lagging subscriptions, and reconnects when it drops,
// until Close.
func (c *Client) run(cn *conn) {
	defer c.wg.Done()
	b := backoff{min: c.opts.MinBackoff, max: c.opts.MaxBackoff}
	for cn != nil {
		up := time.Now()
		c.serve(cn)
		cn.close()
		if c.ctx.Err() != nil {
			return
		}
		if c.suspended() {
			c.log.Info("sluice client: suspended; the connection is closed until Resume")
		} else {
			c.log.Warn("sluice client: connection lost", "cause", cn.cause())
		}
		c.lost(cn)
		if time.Since(up) >= c.opts.MaxBackoff {
			b.reset()
		}
		cn = c.reconnect(&b)
	}
}

// serve watches a live connection until it ends or the client closes.
func (c *Client) serve(cn *conn) {
	var tick <-chan time.Time
	if c.opts.PingInterval > 0 {
		t := time.NewTicker(c.opts.PingInterval)
		defer t.Stop()
		tick = t.C
	}
	var drained <-chan struct{}
	if c.settle(cn) {
		drained = c.drained()
	}
	refresh := time.NewTimer(time.Hour)
	defer refresh.Stop()
	refreshC := c.armRefresh(cn, refresh)
	// A resubscription the edge refused for now (unavailable) is held
	// until this timer fires, a backoff delay after the refusal, then
	// waits as a lagging one does, so that the clients of a cluster that
	// cannot read its log (an election) neither hammer it nor come back
	// in lockstep. Held, it is left out when others are resubscribed.
	b := backoff{min: c.opts.MinBackoff, max: c.opts.MaxBackoff}
	retry := time.NewTimer(time.Hour)
	defer retry.Stop()
	var retryC <-chan time.Time // nil while the timer is not armed
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-cn.done:
			return
		case <-tick:
			cn.ping(c.opts.PingInterval)
		case <-refreshC:
			c.refresh(cn)
			refreshC = c.armRefresh(cn, refresh)
		case <-c.work:
			if c.settle(cn) {
				drained = c.drained()
			}
		case <-retryC:
			retryC = nil
			c.release()
			drained = c.drained()
		case <-drained:
			drained = nil
			subs, _ := c.waiting()
			c.resubscribe(cn, subs, false)
			if _, held := c.waiting(); !held {
				b.reset()
			} else if retryC == nil {
				retry.Reset(b.next()) // refused for now
				retryC = retry.C
			}
		}
	}
}

// armRefresh sets t to the next token refresh of cn and returns its
// channel, or nil when there is none to make.
func (c *Client) armRefresh(cn *conn, t *time.Timer) <-chan time.Time {
	d, ok := c.refreshDelay(cn.tokenExp)
	if at := cn.retryAt; !at.IsZero() {
		cn.retryAt = time.Time{}
		d, ok = time.Until(at), true
	}
	if !ok {
		return nil
	}
	t.Reset(d)
	return t.C
}

// drained returns a channel closed once the delivery buffer is half empty.
func (c *Client) drained() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drainedLocked()
}

// settle unsubscribes on the edge what no one wants there: orphans and
// lagging subscriptions (whose data is being dropped). It reports whether
// lagging subscriptions wait for the buffer to drain.
func (c *Client) settle(cn *conn) bool {
	c.mu.Lock()
	var ids []string
	for _, o := range c.orphans {
		// An orphan of a dead connection died with it; an id taken again
		// since belongs to its new owner.
		if s := c.subs[o.id]; o.cn == cn && (s == nil || s.conn != cn) {
			ids = append(ids, o.id)
		}
	}
	c.orphans = nil
	var lagging []*Subscription
	waiting := false
	for _, s := range c.subs {
		if s.lag {
			waiting = true
			if s.conn == cn {
				lagging = append(lagging, s)
			}
		}
	}
	c.mu.Unlock()

	for _, id := range ids {
		_ = c.unsubscribeOnEdge(cn, id)
	}
	for _, s := range lagging {
		if err := c.unsubscribeOnEdge(cn, s.id); err != nil {
			return false // the connection is going; the reconnect resubscribes
		}
		c.mu.Lock()
		if s.conn == cn {
			s.conn = nil
		}
		c.mu.Unlock()
	}
	return waiting
}

// unsubscribeOnEdge removes a subscription id from the edge; not_subscribed
// counts as done.
func (c *Client) unsubscribeOnEdge(cn *conn, id string) error {
	err := cn.request(c.ctx, rtm.ActionUnsubscribe, &rtm.UnsubscribeBody{SubscriptionID: id}, nil)
	if e, ok := rtm.AsError(err); ok {
		if e.Code != rtm.CodeNotSubscribed {
			c.log.Warn("sluice client: unsubscribe refused", "subscription_id", id, "err", err)
		}
		return nil
	}
	return err
}

// waiting returns the lagging subscriptions that the edge no longer holds,
// ready to be resubscribed, and whether others are held (refused for now)
// until serve's retry timer fires (release).
func (c *Client) waiting() (subs []*Subscription, held bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.subs {
		switch {
		case s.held:
			held = true
		case s.lag && s.conn == nil:
			subs = append(subs, s)
		}
	}
	return subs, held
}

// release lets the held subscriptions be resubscribed: serve's retry
// timer fired.
func (c *Client) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.subs {
		s.held = false
	}
}

// lost records that a connection dropped.
func (c *Client) lost(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == cn {
		c.cur = nil
		c.ready = make(chan struct{})
	}
	for _, s := range c.subs {
		if s.conn == cn {
			s.conn = nil
		}
		s.moved = s.moved || s.lag
		// The next connection (after a reconnect's own backoff delay) tries
		// again at once.
		s.held = false
	}
	c.setStateLocked(Disconnected)
}

// reconnect dials until a connection is up and its subscriptions restored,
// waiting a backoff delay before each attempt; nil once the client closes.
func (c *Client) reconnect(b *backoff) *conn {
	for {
		delay := b.next()
		switch waited, ok := c.awaitResume(); {
		case !ok:
			return nil
		case waited:
			// Back from a suspension: at once, as if for the first time.
			b.reset()
			delay = 0
		}
		t := time.NewTimer(delay)
		select {
		case <-c.ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		c.mu.Lock()
		c.setStateLocked(Reconnecting)
		c.mu.Unlock()
		cn, err := c.connect(c.ctx)
		if err == nil {
			if err = c.resume(cn); err != nil {
				cn.close()
			}
		}
		if err == nil {
			return cn
		}
		if c.ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, errSuspended) {
			continue // suspended while it connected: awaitResume waits
		}
		c.log.Warn("sluice client: reconnect failed", "attempt", b.attempt, "err", err)
		c.mu.Lock()
		c.setStateLocked(Disconnected)
		c.mu.Unlock()
	}
}

// resume resubscribes every live subscription on a new connection (the
// lagging ones wait for the buffer to drain, in serve), then makes it the
// client's connection.
func (c *Client) resume(cn *conn) error {
	c.mu.Lock()
	var subs []*Subscription
	for _, s := range c.subs {
		if !s.lag {
			subs = append(subs, s)
		}
		// A refusal on a connection that failed before it was up: the
		// next connection tries again at once, as after a drop (lost).
		s.held = false
	}
	c.mu.Unlock()
	if err := c.resubscribe(cn, subs, true); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	if c.susp.on {
		return errSuspended // Suspend came while it connected; its subscriptions resume after Resume
	}
	c.cur = cn
	close(c.ready)
	c.susp.woke = false // this was the reconnect a Resume asked for, if any
	c.setStateLocked(Connected)
	return nil
}

// resubscribe subscribes again, each from the position after the last
// message it queued for its handler, without force. The requests are
// pipelined. A refusal by the edge ends that subscription and reaches its
// OnError, except two. unavailable (the edge cannot read its log now, as
// during a cluster's election: try again) keeps the subscription at its
// position, waiting as a lagging one does, for serve to try again. And,
// after a reconnect, expired_position (the messages to resume from are
// gone: the edge restarted, or the client moved to an edge without
// them): unless Strict, the subscription is then subscribed again with
// fast_forward, from the oldest message the edge has, and its OnGap
// hears of it. A connection failure is returned.
func (c *Client) resubscribe(cn *conn, subs []*Subscription, reconnect bool) error {
	expired, err := c.resubscribeAll(cn, subs, false, reconnect)
	if err != nil || len(expired) == 0 {
		return err
	}
	_, err = c.resubscribeAll(cn, expired, true, true)
	return err
}

// resubscribeAll sends the resubscriptions of subs (with fast_forward if
// forward), then waits for their replies. It ends the subscriptions the
// edge refused, but for those refused with unavailable, left lagging, and
// returns those refused with expired_position that carry on instead:
// after a reconnect (reconnect set, or a lagging subscription whose
// connection was lost meanwhile), unless Strict.
func (c *Client) resubscribeAll(cn *conn, subs []*Subscription, forward, reconnect bool) ([]*Subscription, error) {
	calls := make([]*call, 0, len(subs))
	resumed := make([]bool, 0, len(subs))
	for _, s := range subs {
		c.mu.Lock()
		resumed = append(resumed, reconnect || s.moved)
		body := s.resumeBody()
		body.FastForward = body.FastForward || forward
		asked := s.next
		at := &asked
		if s.opts.Prefix {
			at = nil // positions are per channel: it goes on from now
		} else {
			body.Position = asked.String()
		}
		c.mu.Unlock()
		cl, err := cn.send(c.ctx, rtm.ActionSubscribe, body, c.confirmHook(s, cn, false, at))
		if err != nil {
			return nil, err
		}
		calls = append(calls, cl)
	}
	var failed error
	var expired []*Subscription
	for i, cl := range calls {
		err := cn.wait(c.ctx, cl, nil)
		if e, ok := rtm.AsError(err); ok && !errors.Is(err, ErrDisconnected) {
			s := subs[i]
			if !forward && resumed[i] && s.carriesOn(e) {
				c.log.Info("sluice client: resume position gone, carrying on from the oldest message",
					"subscription_id", s.id, "position", e.Position)
				expired = append(expired, s)
				continue
			}
			retry := e.Code == rtm.CodeUnavailable
			if retry {
				c.log.Info("sluice client: resubscribe refused for now, trying again", "subscription_id", s.id, "err", err)
			}
			c.mu.Lock()
			if retry && !s.finished {
				// Not on the edge, nothing dropped: serve resubscribes it
				// from s.next after a backoff delay, unless a reconnect
				// does first.
				s.lag, s.moved, s.held = true, resumed[i], true
			} else {
				c.failLocked(s, e)
			}
			c.mu.Unlock()
			continue
		}
		if err != nil && failed == nil {
			failed = err
		}
	}
	return expired, failed
}

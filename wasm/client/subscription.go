package client

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// SubscribeOptions select where a subscription starts and how it behaves.
// A nil *SubscribeOptions means the defaults: start with the next message
// published, id = channel name.
type SubscribeOptions struct {
	// ID names the subscription; default the channel name. Several
	// subscriptions to one channel need distinct ids. Required with
	// Filter.
	ID string
	// Position starts the subscription at this position, inclusive (the
	// message there is the first delivered). It takes precedence over
	// the history fields.
	Position *rtm.Position
	// HistoryCount starts with (at most) the last HistoryCount messages.
	HistoryCount int
	// HistoryAge starts with the messages younger than this, in whole
	// seconds (rounded up).
	HistoryAge time.Duration
	// FastForward lets the edge skip messages that expired before this
	// subscriber read them (reported to OnInfo and OnGap) instead of
	// ending the subscription with out_of_sync.
	FastForward bool
	// Strict ends the subscription with expired_position (OnError) when,
	// after a reconnect, the edge no longer has the position to resume
	// from. By default the client subscribes again with fast_forward,
	// carries on from the oldest message the edge has and reports the
	// Gap to OnGap: for a live page, missing a few messages is better
	// than going silent. Set Strict where every message matters and the
	// application recovers by other means.
	Strict bool
	// Force replaces a live subscription with the same id, on the edge and
	// in this client (the old one ends with ErrReplaced).
	Force bool
	// Filter is a stream SQL view, "SELECT ... FROM channel WHERE ...";
	// the channel argument of Subscribe may then be empty.
	Filter string
	// Period is the aggregation period of a Filter view, in whole seconds.
	Period time.Duration
	// Batch, when positive, asks the edge for at most Batch messages per
	// rtm/subscription/data (Sluice's batch extension; other RTM edges
	// ignore it). With 1 every Message.Position is the exact resume point
	// of its message, at the cost of one PDU per message. Default: what
	// the edge has ready.
	Batch int
	// OnlyChanges skips a message equal to the one delivered before it
	// (RTM's only: "value_changes"; the edge compares decoded values).
	// The edge keeps the last value per subscription: after a reconnect
	// the first message delivered may equal the last one before it.
	OnlyChanges bool
	// Prefix subscribes to every channel whose name starts with the
	// channel given (RTM's prefix: true); each Message names its Channel.
	// Positions are per channel, so a Prefix subscription takes no
	// Position and, after a reconnect, resumes with the messages published
	// from then on: what was published while disconnected is not
	// delivered (HistoryCount, per channel, applies to the first
	// subscribe only).
	Prefix bool
	// Delta asks the edge for each message after the first as a fossil
	// delta against the message before it (Sluice's delta extension;
	// other RTM edges ignore it), which the client applies before the
	// handler sees the message: the handler gets the same values, and a
	// feed of large messages that differ in a few fields takes a few
	// dozen bytes a message on the wire. Not with Filter, OnlyChanges or
	// Prefix.
	Delta bool
	// OnError is called, on the delivery goroutine, when the subscription
	// ends because of the edge: out_of_sync (it fell too far behind), or a
	// failed resubscription after a reconnect (expired_position: the
	// position to resume from is gone). The error is an *rtm.Error. It is
	// not called for Unsubscribe or Close.
	OnError func(error)
	// OnInfo is called, on the delivery goroutine and in order with the
	// messages, when the edge fast-forwarded the subscription
	// (Info == "fast_forward"; MissedMessageCount says how many were
	// skipped), OnGap just after it.
	OnInfo func(rtm.SubscriptionInfo)
	// OnGap is called, on the delivery goroutine and before the first
	// message after the gap, when the subscription carries on past
	// messages it may have missed: after a reconnect whose position the
	// edge no longer had (unless Strict), or a fast_forward. See Gap.
	OnGap func(Gap)
	// Direct runs the handler and OnInfo on the connection's reader
	// goroutine as each batch arrives, instead of on the delivery
	// goroutine: one goroutine switch less per batch, for handlers that
	// return at once. A Direct handler must not block, nor wait for the
	// client (the reader it holds up reads the replies too), and it may
	// run at the same time as the callbacks of other subscriptions. The
	// delivery buffer does not apply: a slow Direct handler slows its
	// connection down, until the edge drops its data (out_of_sync, or a
	// fast_forward).
	Direct bool
	// Presence asks the edge for the channel's members (Sluice's presence
	// extension; the role needs the presence permission on the channel):
	// Subscription.Members lists them, and OnPresence hears them once they
	// are first known, then each join and leave. After a reconnect the
	// edge's new snapshot is compared with what was known, and only the
	// differences are heard. A user with several connections is one
	// member.
	Presence bool
	// OnPresence is called, on the delivery goroutine, with the members
	// once they are known (PresenceMembers), then with each one who joins
	// (PresenceJoin) or leaves (PresenceLeave).
	OnPresence func(PresenceEvent)
}

// Message is one message delivered to a subscription's handler.
type Message struct {
	// SubscriptionID names the subscription.
	SubscriptionID string
	// Value is the message in the canonical data model: nil, bool, int64,
	// uint64 (above MaxInt64 only), float64, string, []byte, []any or
	// map[string]any.
	Value any
	// Position is the position after the rtm/subscription/data PDU that
	// carried the message: a subscription started there continues after
	// the last message of that batch. It is the exact resume point of
	// this message only when EndOfBatch is true (always, with
	// SubscribeOptions.Batch 1 on a Sluice edge).
	Position rtm.Position
	// EndOfBatch marks the last message of its PDU.
	EndOfBatch bool
	// Channel is the message's channel, for a Prefix subscription (its
	// Position is that channel's); empty otherwise.
	Channel string
}

// Subscription is a live subscription. Its handler runs on the client's
// delivery goroutine (on the connection's reader if Direct); the client resubscribes it after a reconnect from the
// position after the last message it queued for the handler, so the
// handler sees every message once, in order, without gaps, as long as the
// edge still holds them.
type Subscription struct {
	c       *Client
	id      string
	channel string
	opts    SubscribeOptions
	handler func(Message)
	done    chan struct{}
	// ended is set (under c.mu, with err and done) once no callback will
	// run for the subscription any more; the delivery goroutine reads it
	// without the lock between messages.
	ended atomic.Bool

	// Guarded by c.mu.
	conn      *conn         // where the edge holds the subscription; nil while it does not
	next      rtm.Position  // where to resume: after the last batch queued for the handler
	delivered rtm.Position  // after the last batch handed to the handler
	lag       bool          // the delivery buffer overflowed, or the edge refused its resubscription for now (unavailable): data is dropped until resubscribed
	moved     bool          // a connection was lost since it lagged (or was refused after a reconnect): its resubscription follows a reconnect
	held      bool          // the edge refused its resubscription or ended it (unavailable): it waits for serve's retry timer, on this connection
	asked     *rtm.Position // the position the edge was last asked to start at, until data or a fast_forward notice answers it
	finished  bool          // no longer live: out of c.subs, no data accepted
	abandoned bool          // Subscribe gave up before the edge's reply
	err       error
	pres      *subPresence // with SubscribeOptions.Presence: the members
	base      []byte       // with SubscribeOptions.Delta: the encoding of the last message, which the next delta applies to; nil: none
}

// ID returns the subscription id.
func (s *Subscription) ID() string { return s.id }

// Channel returns the channel subscribed to ("" for a Filter naming it).
func (s *Subscription) Channel() string { return s.channel }

// Position returns the next position to read: the one after the last
// batch of messages handed to the handler (or the start position). A new
// subscription at this position continues without gap or duplicate.
func (s *Subscription) Position() rtm.Position {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.delivered
}

// Done is closed when the subscription has ended: no handler or callback
// will be called for it any more.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err returns why the subscription ended (ErrUnsubscribed, ErrClosed,
// ErrReplaced or the edge's *rtm.Error), nil while it is live.
func (s *Subscription) Err() error {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return s.err
}

// Subscribe subscribes to a channel and calls handler with each message,
// on the client's delivery goroutine: in order, never concurrently with
// any other callback of the client. It returns once the edge accepted the
// subscription. An error from the edge is an *rtm.Error
// (already_subscribed, expired_position, authorization_denied, ...).
func (c *Client) Subscribe(ctx context.Context, channel string, opts *SubscribeOptions, handler func(Message)) (*Subscription, error) {
	s, body, err := c.newSubscription(channel, opts, handler)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	closed, old := c.closed, c.subs[s.id]
	c.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case old != nil && !s.opts.Force:
		return nil, errtext.Wrap("client: subscribe "+strconv.Quote(s.id),
			&rtm.Error{Code: rtm.CodeAlreadySubscribed, Reason: "subscription " + strconv.Quote(s.id) + " is already live in this client"})
	}
	cn, cl, err := c.sendSubscribe(ctx, s, body)
	if cn == nil {
		return nil, err
	}
	if err == nil {
		err = cn.wait(ctx, cl, nil)
	}
	if err != nil && ctx.Err() != nil && cl != nil {
		c.mu.Lock()
		registered := c.subs[s.id] == s
		s.abandoned = !registered
		c.mu.Unlock()
		if registered { // the reply won the race with ctx
			return s, nil
		}
	}
	if err != nil {
		return nil, errtext.Wrap("client: subscribe "+strconv.Quote(s.id), c.closedErr(err))
	}
	c.mu.Lock()
	confirmed := c.subs[s.id] == s || s.finished // finished: it already ended, as Done shows
	c.mu.Unlock()
	if !confirmed {
		return nil, errtext.Wrap("client: subscribe "+strconv.Quote(s.id), errtext.Kind(ErrUnexpectedReply, "malformed subscribe/ok"))
	}
	return s, nil
}

// sendSubscribe sends a new subscription's request on the live
// connection, waiting for one while the client reconnects (like do). It
// returns no connection when there is none to wait for.
func (c *Client) sendSubscribe(ctx context.Context, s *Subscription, body *rtm.SubscribeBody) (*conn, *call, error) {
	for {
		cn, err := c.waitConn(ctx)
		if err != nil {
			return nil, nil, err
		}
		cl, err := cn.send(ctx, rtm.ActionSubscribe, body, c.confirmHook(s, cn, true, s.opts.Position))
		if !errors.Is(err, errUnsent) {
			return cn, cl, err
		}
	}
}

// newSubscription checks a Subscribe call and builds its request.
func (c *Client) newSubscription(channel string, opts *SubscribeOptions, handler func(Message)) (*Subscription, *rtm.SubscribeBody, error) {
	var o SubscribeOptions
	if opts != nil {
		o = *opts
	}
	id := o.ID
	if id == "" {
		id = channel
	}
	switch {
	case handler == nil:
		return nil, nil, errtext.Kind(ErrOptions, "Subscribe needs a handler")
	case o.Filter != "" && o.ID == "":
		return nil, nil, errtext.Kind(ErrOptions, "a Filter subscription needs an ID")
	case o.HistoryCount < 0 || o.HistoryAge < 0 || o.Period < 0:
		return nil, nil, errtext.Kind(ErrOptions, "negative history or period")
	case o.Prefix && (o.Position != nil || o.Filter != ""):
		return nil, nil, errtext.Kind(ErrOptions, "a Prefix subscription takes no Position or Filter")
	case o.Delta && (o.Filter != "" || o.OnlyChanges || o.Prefix):
		return nil, nil, errtext.Kind(ErrOptions, "Delta takes no Filter, OnlyChanges or Prefix")
	}
	if o.Filter == "" || channel != "" {
		if err := rtm.ValidateChannel(channel); err != nil {
			return nil, nil, errtext.Wrap("client: subscribe "+strconv.Quote(channel), err)
		}
	}
	s := &Subscription{c: c, id: id, channel: channel, opts: o, handler: handler, done: make(chan struct{})}
	if o.Presence {
		s.pres = &subPresence{members: map[string]Member{}}
	}
	body := s.resumeBody()
	body.Force = o.Force
	switch {
	case o.Position != nil:
		body.Position = o.Position.String()
	case o.HistoryCount > 0 || o.HistoryAge > 0:
		body.History = &rtm.History{}
		if o.HistoryCount > 0 {
			n := int64(o.HistoryCount)
			body.History.Count = &n
		}
		if o.HistoryAge > 0 {
			age := ceilSeconds(o.HistoryAge)
			body.History.Age = &age
		}
	}
	return s, body, nil
}

// resumeBody is the request that (re)subscribes without position; the
// caller sets where to start.
func (s *Subscription) resumeBody() *rtm.SubscribeBody {
	return &rtm.SubscribeBody{
		Channel:        s.channel,
		SubscriptionID: s.id,
		FastForward:    s.opts.FastForward,
		Filter:         s.opts.Filter,
		Period:         ceilSeconds(s.opts.Period),
		Batch:          int64(max(s.opts.Batch, 0)),
		Only:           onlyChanges(s.opts.OnlyChanges),
		Prefix:         s.opts.Prefix,
		Presence:       s.opts.Presence,
		Delta:          s.opts.Delta,
	}
}

// onlyChanges is the only option of a subscription.
func onlyChanges(on bool) string {
	if on {
		return rtm.OnlyValueChanges
	}
	return ""
}

// ceilSeconds converts a duration to whole seconds, rounding up.
func ceilSeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// confirmHook returns the reply hook of a subscribe request: on the reader
// goroutine, before any data of the subscription can arrive, it routes the
// subscription id to s and records where it starts. asked is the position
// the request started at, nil for none: a fast_forward notice that follows
// the reply tells the gap from there.
func (c *Client) confirmHook(s *Subscription, cn *conn, first bool, asked *rtm.Position) func(rtm.Envelope) {
	return func(env rtm.Envelope) {
		if env.Action != rtm.Reply(rtm.ActionSubscribe, rtm.OutcomeOK) {
			return
		}
		var r rtm.SubscribeReply
		err := cn.codec.DecodeBody(env.Body, &r)
		var pos rtm.Position
		if err == nil {
			pos, err = rtm.ParsePosition(r.Position)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if old := c.subs[s.id]; old != nil && old != s && s.opts.Force && first {
			c.endLocked(old, ErrReplaced)
		}
		if c.closed {
			return
		}
		if err != nil || s.finished || s.abandoned {
			if err != nil && !first {
				// The waiter of a first subscribe reports it instead.
				c.failLocked(s, &rtm.Error{Code: rtm.CodeInvalidFormat, Reason: "malformed subscribe reply: " + err.Error()})
			}
			c.orphans = append(c.orphans, orphan{cn: cn, id: s.id})
			c.signalWork()
			return
		}
		c.subs[s.id] = s
		s.conn, s.next, s.lag, s.moved, s.asked = cn, pos, false, false, asked
		if s.pres != nil {
			s.pres.abandonLocked() // a snapshot cut off by a lost connection starts again
		}
		if first {
			s.delivered = pos
		}
	}
}

// endLocked ends a subscription: no more data is accepted, no more
// callbacks run, Done is closed and Err returns err.
func (c *Client) endLocked(s *Subscription, err error) {
	if !s.finished {
		s.finished = true
		if c.subs[s.id] == s {
			delete(c.subs, s.id)
		}
	}
	s.conn = nil
	if !s.ended.Load() {
		s.err = err
		s.ended.Store(true)
		close(s.done)
	}
}

// failLocked ends a subscription because of the edge: it stops accepting
// data at once, and the error reaches OnError after the messages already
// queued.
func (c *Client) failLocked(s *Subscription, err *rtm.Error) {
	if s.finished {
		return
	}
	s.finished = true
	s.conn = nil
	if c.subs[s.id] == s {
		delete(c.subs, s.id)
	}
	if err.SubscriptionID == "" {
		err.SubscriptionID = s.id
	}
	c.enqueueLocked(event{kind: evError, sub: s, err: err})
}

// Unsubscribe ends the subscription here and on the edge. Once it
// returns, the handler is not called again for it (a call already running
// may finish). A subscription that already ended returns nil.
func (s *Subscription) Unsubscribe(ctx context.Context) error {
	c := s.c
	c.mu.Lock()
	if s.ended.Load() {
		c.mu.Unlock()
		return nil
	}
	cn := s.conn
	onEdge := !s.finished && cn != nil
	c.endLocked(s, ErrUnsubscribed)
	c.mu.Unlock()
	if !onEdge {
		return nil
	}
	err := cn.request(ctx, rtm.ActionUnsubscribe, &rtm.UnsubscribeBody{SubscriptionID: s.id}, nil)
	if e, ok := rtm.AsError(err); (ok && e.Code == rtm.CodeNotSubscribed) || errors.Is(err, ErrDisconnected) {
		return nil // the edge no longer has it either
	}
	if err != nil {
		return errtext.Wrap("client: unsubscribe "+strconv.Quote(s.id), err)
	}
	return nil
}

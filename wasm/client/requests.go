package client

import (
	"context"
	"strconv"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// PublishOption adjusts a Publish, Write, PublishNoAck or PublishAsync.
type PublishOption func(*rtm.PublishBody)

// ExcludeSelf keeps the message from this client's own subscriptions to
// the channel: everyone else subscribed gets it (a Sluice extension,
// exclude_self). It is stored as any other, so a Read, or a subscription
// after a reconnect (a new connection), returns it; a subscription of
// the same connection never does, live or resuming. An RTM edge without
// the extension ignores it and delivers the message back.
func ExcludeSelf() PublishOption {
	return func(b *rtm.PublishBody) { b.ExcludeSelf = true }
}

// Publish publishes a message to a channel and waits for the edge to
// acknowledge it; it returns the message's position. The message is a
// value of the data model (nil, bool, numbers, string, []byte, []any,
// map[string]any); other Go values are sent as their JSON form (structs
// with their json tags). While the client reconnects, Publish waits for
// the connection (bounded by ctx). If the connection drops after the
// publish was sent, it returns ErrDisconnected and does not retry: the
// message may or may not have been stored.
func (c *Client) Publish(ctx context.Context, channel string, message any, opts ...PublishOption) (rtm.Position, error) {
	return c.store(ctx, rtm.ActionPublish, "publish to", channel, message, opts)
}

// Write stores a message like Publish; RTM offers it under this name for
// key-value use (the newest message of a channel is its value, see Read).
func (c *Client) Write(ctx context.Context, channel string, message any, opts ...PublishOption) (rtm.Position, error) {
	return c.store(ctx, rtm.ActionWrite, "write to", channel, message, opts)
}

// WriteIf writes a message only if at is the position of the channel's
// newest message (a compare-and-set; the zero position for a channel
// without one), and returns the new message's position. When the channel
// has moved on, nothing is written and the error is an *rtm.Error with
// code rtm.CodePositionMismatch: read the channel and try again.
func (c *Client) WriteIf(ctx context.Context, channel string, message any, at rtm.Position) (rtm.Position, error) {
	body, err := publishBody(channel, message, nil)
	if err != nil {
		return rtm.Position{}, errtext.Wrap("client: write to "+strconv.Quote(channel)+" at "+at.String(), err)
	}
	body.Position = at.String()
	return c.positionRequest(ctx, rtm.ActionWrite, "write at "+at.String()+" to", channel, body)
}

// Purge drops a channel's history (RTM's delete with purge): its
// messages can no longer be read or subscribed from, and subscribers
// that had read them all go on with the next message.
func (c *Client) Purge(ctx context.Context, channel string) error {
	if err := rtm.ValidateChannel(channel); err != nil {
		return errtext.Wrap("client: purge "+strconv.Quote(channel), err)
	}
	var r map[string]any
	if err := c.do(ctx, rtm.ActionDelete, &rtm.ChannelBody{Channel: channel, Purge: true}, &r); err != nil {
		return errtext.Wrap("client: purge "+strconv.Quote(channel), err)
	}
	return nil
}

// Delete publishes null to a channel, the RTM way of deleting a key.
func (c *Client) Delete(ctx context.Context, channel string) (rtm.Position, error) {
	if err := rtm.ValidateChannel(channel); err != nil {
		return rtm.Position{}, errtext.Wrap("client: delete "+strconv.Quote(channel), err)
	}
	return c.positionRequest(ctx, rtm.ActionDelete, "delete", channel, &rtm.ChannelBody{Channel: channel})
}

// PublishNoAck publishes without waiting for, or getting, an answer: the
// fire-and-forget fast path. It fails only locally: ErrDisconnected while
// the client reconnects, ErrClosed after Close; the edge reports nothing,
// not even a refusal.
func (c *Client) PublishNoAck(channel string, message any, opts ...PublishOption) error {
	body, err := publishBody(channel, message, opts)
	if err != nil {
		return errtext.Wrap("client: publish to "+strconv.Quote(channel), err)
	}
	cn, err := c.liveConn()
	if err == nil {
		err = cn.sendNoReply(rtm.ActionPublish, body)
	}
	if err != nil {
		return errtext.Wrap("client: publish to "+strconv.Quote(channel), err)
	}
	return nil
}

// PublishAsync publishes without waiting: it returns once the publish is
// queued, and ack (when not nil) is called later, once, with the
// message's position or why it has none: the edge's refusal (an
// *rtm.Error), ErrDisconnected when the connection dropped first (the
// message may or may not have been stored; it is not retried), ErrClosed
// after Close. Publishes made one after another share writes, so this is
// the way to publish at a high rate from one goroutine.
//
// ack runs on one of the client's goroutines, usually the connection's
// reader: it must return quickly and must not wait for the client (it may
// call PublishAsync again; the publishes that the acknowledgments of one
// read set off leave in one write). PublishAsync fails at once, without
// calling ack, when the message cannot be sent now: ErrDisconnected while
// the client reconnects, ErrClosed after Close, or an invalid channel or
// message.
func (c *Client) PublishAsync(channel string, message any, ack func(rtm.Position, error), opts ...PublishOption) error {
	body, err := publishBody(channel, message, opts)
	if err != nil {
		return errtext.Wrap("client: publish to "+strconv.Quote(channel), err)
	}
	cn, err := c.liveConn()
	if err == nil {
		err = cn.sendAsync(rtm.ActionPublish, body, func(cl *call) {
			if ack == nil {
				return
			}
			var r rtm.PositionBody
			err := c.closedErr(cl.err)
			if err == nil {
				err = cn.decodeReply(cl, &r)
			}
			ack(replyPosition(r, err, "publish to", channel))
		})
	}
	if err != nil {
		return errtext.Wrap("client: publish to "+strconv.Quote(channel), c.closedErr(err))
	}
	return nil
}

// liveConn returns the live connection, without waiting for one.
func (c *Client) liveConn() (*conn, error) {
	c.mu.Lock()
	closed, cn := c.closed, c.liveLocked()
	c.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case cn == nil:
		return nil, ErrDisconnected
	}
	return cn, nil
}

// store runs a publish or write.
func (c *Client) store(ctx context.Context, action, verb, channel string, message any, opts []PublishOption) (rtm.Position, error) {
	body, err := publishBody(channel, message, opts)
	if err != nil {
		return rtm.Position{}, errtext.Wrap("client: "+verb+" "+strconv.Quote(channel), err)
	}
	return c.positionRequest(ctx, action, verb, channel, body)
}

// publishBody checks the channel and prepares the message, with opts.
func publishBody(channel string, message any, opts []PublishOption) (*rtm.PublishBody, error) {
	if err := rtm.ValidateChannel(channel); err != nil {
		return nil, err
	}
	v, err := messageValue(message)
	if err != nil {
		return nil, err
	}
	b := &rtm.PublishBody{Channel: channel, Message: v}
	for _, o := range opts {
		o(b)
	}
	return b, nil
}

// positionRequest runs a request whose reply is {position}.
func (c *Client) positionRequest(ctx context.Context, action, verb, channel string, body any) (rtm.Position, error) {
	var r rtm.PositionBody
	err := c.do(ctx, action, body, &r)
	return replyPosition(r, err, verb, channel)
}

// replyPosition returns the position of a {position} reply, or the
// request's error, with what was asked.
func replyPosition(r rtm.PositionBody, err error, verb, channel string) (rtm.Position, error) {
	if err != nil {
		return rtm.Position{}, errtext.Wrap("client: "+verb+" "+strconv.Quote(channel), err)
	}
	pos, err := rtm.ParsePosition(r.Position)
	if err != nil {
		return rtm.Position{}, errtext.Wrap("client: "+verb+" "+strconv.Quote(channel)+": reply position "+strconv.Quote(r.Position), err)
	}
	return pos, nil
}

// ReadOption adjusts a Read.
type ReadOption func(*rtm.ReadBody)

// AtPosition reads the message at p instead of the newest one.
func AtPosition(p rtm.Position) ReadOption {
	return func(b *rtm.ReadBody) { b.Position = p.String() }
}

// Read returns a channel's newest message (or the one at AtPosition) and
// its position. The message is nil when there is none; a position that
// expired is an *rtm.Error with code expired_position.
func (c *Client) Read(ctx context.Context, channel string, opts ...ReadOption) (any, rtm.Position, error) {
	if err := rtm.ValidateChannel(channel); err != nil {
		return nil, rtm.Position{}, errtext.Wrap("client: read "+strconv.Quote(channel), err)
	}
	body := &rtm.ReadBody{Channel: channel}
	for _, o := range opts {
		o(body)
	}
	var r rtm.ReadReply
	if err := c.do(ctx, rtm.ActionRead, body, &r); err != nil {
		return nil, rtm.Position{}, errtext.Wrap("client: read "+strconv.Quote(channel), err)
	}
	var pos rtm.Position
	if r.Position != "" {
		var err error
		if pos, err = rtm.ParsePosition(r.Position); err != nil {
			return nil, rtm.Position{}, errtext.Wrap("client: read "+strconv.Quote(channel)+": reply position "+strconv.Quote(r.Position), err)
		}
	}
	return r.Message, pos, nil
}

package session

import (
	"context"
	"errors"
	"strings"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// heartbeatPosition is the position replied to a $heartbeat publish, which
// stores nothing.
var heartbeatPosition = rtm.Position{}.String()

// publish serves rtm/publish and rtm/write: the message is durable in the
// channel buffer before the ok is queued.
func (c *Session) publish(env *rtm.Envelope) (any, error) {
	var b rtm.PublishBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if err := CheckChannel(b.Channel); err != nil {
		return nil, err
	}
	if err := checkPublishOptions(env.Action, &b, c.edge.TTL); err != nil {
		return nil, err
	}
	if err := c.checkWritePosition(env, &b); err != nil {
		return nil, err
	}
	if b.Channel == rtm.HeartbeatChannel {
		c.ack.Position = heartbeatPosition
		return &c.ack, nil
	}
	if !c.perms.CanPublish(b.Channel) {
		return nil, c.denied(env.Action, "publish to", b.Channel)
	}
	if b.Read != "" && !c.perms.CanSubscribe(b.Channel) {
		// The previous message is a read of the channel.
		return nil, c.denied(env.Action, "read (for read: "+b.Read+")", b.Channel)
	}
	var size int
	var err error
	if b.Message, err = c.askPublish(b.Channel, b.Message); err != nil {
		return nil, err
	}
	c.scratch, size, err = payload.Encode(c.scratch[:0], b.Message, c.CodecIndex(), c.edge.Codecs.Codecs(c.CodecIndex()))
	if err != nil {
		if _, ok := rtm.AsError(err); ok {
			return nil, err
		}
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "message cannot be encoded")
	}
	if max := c.app.MaxMessage(); size > max {
		return nil, rtm.Errorf(rtm.CodeMessageTooLarge, "message is %d bytes; this app's limit is %d", size, max)
	}
	origin := ""
	if b.ExcludeSelf {
		origin = c.ID() // the writers of its subscriptions skip it (edge/delivery's send.go, own)
	}
	if b.HasOptions() {
		return c.publishOptions(env, &b, c.scratch, origin)
	}
	return c.append(env, b.Channel, c.scratch, origin)
}

// delete serves rtm/delete: the same as publishing null.
func (c *Session) delete(env *rtm.Envelope) (any, error) {
	var b rtm.ChannelBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if err := CheckChannel(b.Channel); err != nil {
		return nil, err
	}
	if err := checkRead(b.Read); err != nil {
		return nil, err
	}
	if !c.perms.CanPublish(b.Channel) {
		return nil, c.denied(env.Action, "delete in", b.Channel)
	}
	if b.Read != "" && !c.perms.CanSubscribe(b.Channel) {
		return nil, c.denied(env.Action, "read (for read: "+b.Read+")", b.Channel)
	}
	if b.Purge || b.Read != "" {
		return c.deleteOptions(env, &b)
	}
	return c.append(env, b.Channel, payload.Null, "")
}

// maxPubHandles bounds the store handles a connection caches.
const maxPubHandles = 4096

// append stores a publish from origin (the connection's id with
// exclude_self, else "") and returns its acknowledgment; or, if the
// channel log answers later, queues the reply once it does, in request
// order (acks.go).
func (c *Session) append(env *rtm.Envelope, channel string, data []byte, origin string) (any, error) {
	pos, p, err := c.pubHandle(channel).Append(chanlog.Message{Payload: data, Origin: origin, Limit: c.app.ChannelLimit()})
	if err != nil {
		return nil, c.appendError(err)
	}
	if p != nil {
		c.awaitAppend(env.Action, env.ID, p)
		return nil, nil
	}
	c.edge.Counters.MessagesIn[c.CodecIndex()].Add(1)
	c.Traffic().MessagesIn.Add(1)
	c.ack.Position = pos.String()
	return &c.ack, nil
}

// pubHandle returns the channel log's handle of the connection's
// channel, kept for the next publish to it.
func (c *Session) pubHandle(channel string) chanlog.Channel {
	h := c.pubHandles[channel]
	if h == nil {
		if len(c.pubHandles) >= maxPubHandles || c.pubHandles == nil {
			// A publisher spraying many channels starts over rather than
			// holding a handle for each.
			c.pubHandles = make(map[string]chanlog.Channel)
		}
		h = c.edge.ChanLog.Channel(c.app.StoreKey(channel))
		// A copy: a decoded body's strings may share one buffer with
		// its message (the JSON codec's), which the key would keep.
		c.pubHandles[strings.Clone(channel)] = h
	}
	return h
}

// appendError maps a store error of this connection's app to the
// client's. A log may refuse before it sends anything: a durable edge
// that cannot count the app's channels in the log, for the channel
// limit of one it does not hold (chanlog's admit), stores nothing. That
// is the log's not storing it, said as when it answers later, not an
// internal error.
func (c *Session) appendError(err error) error {
	switch {
	case errors.Is(err, store.ErrChannelLimit):
		return ChannelQuotaError(c.app.App)
	case errors.Is(err, store.ErrNotStored):
		return c.edge.LogRefusal(err, "publish")
	}
	return AppendError(err)
}

// AppendError maps a store error to the client's: a message too large
// for the channel buffer is message_too_large.
func AppendError(err error) error {
	if errors.Is(err, store.ErrTooLarge) {
		return rtm.Errorf(rtm.CodeMessageTooLarge, "message does not fit in the channel buffer")
	}
	return err
}

// ChannelQuotaError refuses a publish that would create a channel past
// the app's limit.
func ChannelQuotaError(a *app.App) error {
	return rtm.Errorf(rtm.CodeChannelQuotaExceeded,
		"this app has %d live channels, its limit: publish to an existing channel, or wait for idle ones to expire", a.ChannelLimit())
}

// read serves rtm/read: the message at a position, or the newest one.
func (c *Session) read(env *rtm.Envelope) (any, error) {
	var b rtm.ReadBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if err := CheckChannel(b.Channel); err != nil {
		return nil, err
	}
	if !c.perms.CanSubscribe(b.Channel) {
		return nil, c.denied(env.Action, "read", b.Channel)
	}
	var at *rtm.Position
	if b.Position != "" {
		p, err := parsePosition(b.Position)
		if err != nil {
			return nil, err
		}
		at = &p
	}
	return c.edge.ReadAt(c.Context(), c.app.StoreKey(b.Channel), at, b.Position, c.CodecIndex())
}

// ReadAt reads the message of a store key at a position, or its newest
// when at is nil (asked is the position as the client wrote it, for
// errors), with its message in the codec at index ci: the reply of
// rtm/read, and of the server API's read.
func (e *Edge) ReadAt(ctx context.Context, key string, at *rtm.Position, asked string, ci int) (*rtm.ReadReply, error) {
	r, err := e.ChanLog.Read(ctx, key, at)
	if err != nil {
		return nil, ExpiredOr(err, asked)
	}
	if !r.Found {
		return &rtm.ReadReply{Position: r.Position.String(), Message: nil}, nil
	}
	msg, err := payload.In(r.Frame.Data, ci)
	if err != nil {
		return nil, err
	}
	return &rtm.ReadReply{Position: r.Position.String(), Message: rtm.RawValue(msg)}, nil
}

// ExpiredOr maps store.ErrExpired (and ErrFuture) to expired_position,
// and a log that cannot be read to unavailable.
func ExpiredOr(err error, pos string) error {
	if errors.Is(err, chanlog.ErrUnreadable) {
		return rtm.Errorf(rtm.CodeUnavailable, "the cluster's log cannot be read now; try again")
	}
	if errors.Is(err, store.ErrFuture) {
		e := rtm.Errorf(rtm.CodeExpiredPosition, "position %s is beyond the channel's newest message, so it is from "+
			"another history (another edge's, or one lost in a restart); resubscribe without it", pos)
		e.Position = pos
		return e
	}
	if errors.Is(err, store.ErrExpired) {
		e := rtm.Errorf(rtm.CodeExpiredPosition, "position %s has expired or belongs to another history", pos)
		e.Position = pos
		return e
	}
	return err
}

// denied refuses a request the role lacks the grant for. The reply is
// Satori's, word for word (apps compare it); what was denied goes to the
// edge's debug log, and Sluice's own clients, which know their request,
// say it themselves.
func (c *Session) denied(action, what, channel string) error {
	c.edge.Logger.Debug("authorization denied", "remote", c.Remote(), "appkey", c.app.Key, "action", action,
		"denied", "your role may not "+what+" channel", "channel", channel)
	return errUnauthorized()
}

// errUnauthorized is Satori's authorization_denied.
func errUnauthorized() error {
	return &rtm.Error{Code: rtm.CodeAuthorizationDenied, Reason: "Unauthorized"}
}

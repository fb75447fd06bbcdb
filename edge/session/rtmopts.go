package session

import (
	"errors"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/deadman"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Satori's options of rtm/publish, rtm/write and rtm/delete (PROTOCOL.md,
// "Beyond the basics"): read (the previous message in the reply), a
// write's position (compare-and-set), purge, and ttl with ttl_message
// (ttl.go). A value the edge does not know is refused, never ignored: an
// app that asked for compare-and-set and silently got an unconditional
// write would lose data without a clue.

// checkRead refuses an unknown value of the read option.
func checkRead(read string) error {
	switch read {
	case "", rtm.ReadPrevious, rtm.ReadPreviousOnOK, rtm.ReadPreviousOnError:
		return nil
	}
	return rtm.Errorf(rtm.CodeInvalidFormat, "read must be %q, %q or %q",
		rtm.ReadPrevious, rtm.ReadPreviousOnOK, rtm.ReadPreviousOnError)
}

// checkPublishOptions refuses options a publish or write cannot take;
// ttls bounds the ttl.
func checkPublishOptions(action string, b *rtm.PublishBody, ttls *deadman.Switches) error {
	if err := checkRead(b.Read); err != nil {
		return err
	}
	if b.Position != "" && action != rtm.ActionWrite {
		return rtm.Errorf(rtm.CodeInvalidFormat, "position (compare-and-set) applies to rtm/write, not %s", action)
	}
	if b.TTL == nil {
		if b.TTLMessage != nil {
			return rtm.Errorf(rtm.CodeInvalidFormat, "ttl_message needs a ttl")
		}
		return nil
	}
	return ttls.Allowed(*b.TTL)
}

// checkWritePosition refuses an rtm/write whose position is there but
// empty or null, in any codec: decoded, it looks like no position, and
// the write would overwrite the channel unconditionally; a client that
// lost the position it read (an election, a reconnect) meant a
// compare-and-set. A write without the key stays unconditional. Only a
// write without a position pays for the second decoding, of its keys.
func (c *Session) checkWritePosition(env *rtm.Envelope, b *rtm.PublishBody) error {
	if env.Action != rtm.ActionWrite || b.Position != "" {
		return nil
	}
	var keys rtm.BodyKeys
	if err := c.decode(env, &keys); err != nil {
		return err
	}
	if keys.Has("position") {
		return badPosition()
	}
	return nil
}

// badPosition is Satori's answer to a position that does not parse, word
// for word: apps compare it.
func badPosition() error {
	return &rtm.Error{Code: rtm.CodeInvalidFormat, Reason: "Invalid PDU: 'position' was invalid"}
}

// parsePosition parses a request's position, refusing it as Satori did.
func parsePosition(s string) (rtm.Position, error) {
	p, err := rtm.ParsePosition(s)
	if err != nil {
		return p, badPosition()
	}
	return p, nil
}

// wantsPrevious reports whether a reply of that outcome carries the
// previous message.
func wantsPrevious(read string, ok bool) bool {
	return read == rtm.ReadPrevious || read == rtm.ReadPreviousOnOK && ok || read == rtm.ReadPreviousOnError && !ok
}

// publishOptions serves a publish or write with read, position or ttl:
// the previous message and the compare-and-set are read and checked by
// the channel log in one step with the append (chanlog.Log.AppendIf).
func (c *Session) publishOptions(env *rtm.Envelope, b *rtm.PublishBody, data []byte, origin string) (any, error) {
	w := chanlog.Write{Message: chanlog.Message{Payload: data, Origin: origin, Limit: c.app.ChannelLimit()},
		Previous: b.Read != ""}
	if b.Position != "" {
		p, err := parsePosition(b.Position)
		if err != nil {
			return nil, err
		}
		w.Compare, w.Expect = true, p
	}
	if b.TTL != nil {
		var err error
		if w.TTLMessage, err = c.ttlPayload(b.TTLMessage); err != nil {
			return nil, err
		}
		w.TTL = *b.TTL
	}
	return c.appendIf(env, b.Channel, w, b.Position, b.Read)
}

// appendIf serves a conditional append (asked: its position as the
// client wrote it; read: its read option), and arms its switch. It waits
// for the log, on the connection's reader: the request needs the
// channel's newest message, and the replies of the publishes before it
// leave first.
func (c *Session) appendIf(env *rtm.Envelope, channel string, w chanlog.Write, asked, read string) (any, error) {
	key := c.app.StoreKey(channel)
	c.drainAcks() // this connection's earlier publishes are in the log first
	ctx, cancel := c.edge.RequestContext(c.Context())
	defer cancel()
	pos, prior, err := c.edge.ChanLog.AppendIf(ctx, key, w, c.prevBuf)
	c.prevBuf = prior.Data[:0]
	if errors.Is(err, store.ErrMismatch) {
		e := &rtm.Error{Code: rtm.CodePositionMismatch,
			Reason: "position " + asked + " is not the channel's newest message (" + prior.Position.String() + "); nothing was written"}
		return nil, c.previousError(env, read, e, prior)
	}
	if err != nil {
		return nil, c.writeError(err)
	}
	c.edge.Counters.MessagesIn[c.CodecIndex()].Add(1)
	c.Traffic().MessagesIn.Add(1)
	if w.TTL != 0 {
		c.edge.TTL.Arm(key, pos, w.TTL, w.TTLMessage)
	}
	return c.previousReply(pos.String(), read, prior)
}

// writeError maps the error of a conditional append or a purge to the
// client's: the store's refusals as for a publish, else what the log
// did.
func (c *Session) writeError(err error) error {
	if errors.Is(err, store.ErrChannelLimit) {
		return ChannelQuotaError(c.app.App)
	}
	return c.edge.LogRefusal(err, "conditional publish")
}

// previousReply is the ok reply of a request with the read option.
func (c *Session) previousReply(pos, read string, prior store.Prior) (any, error) {
	if !wantsPrevious(read, true) {
		c.ack.Position = pos
		return &c.ack, nil
	}
	prev, err := c.previous(prior)
	if err != nil {
		return nil, err
	}
	return &rtm.PreviousReply{Position: pos, Previous: prev}, nil
}

// previous is the previous message of a reply in the connection's codec.
func (c *Session) previous(prior store.Prior) (*rtm.Previous, error) {
	if !prior.Found {
		return &rtm.Previous{Message: nil, Position: prior.Position.String()}, nil
	}
	msg, err := payload.In(prior.Data, c.CodecIndex())
	if err != nil {
		return nil, err
	}
	// A copy: prior.Data is the connection's buffer, reused by its next
	// request, and the reply is encoded before that, but msg may be a
	// transcoding of its own.
	return &rtm.Previous{Message: rtm.RawValue(append([]byte(nil), msg...)), Position: prior.Position.String()}, nil
}

// previousError answers e, with the previous message when read asks for
// it on errors. It queues the reply itself (the handler then returns nil,
// nil), or returns e for the ordinary error reply.
func (c *Session) previousError(env *rtm.Envelope, read string, e *rtm.Error, prior store.Prior) error {
	if !wantsPrevious(read, false) {
		return e
	}
	prev, err := c.previous(prior)
	if err != nil {
		return err
	}
	c.edge.Counters.Refuse(e.Code)
	if env.ID.IsZero() {
		return nil
	}
	c.drainAcks()
	frame, err := c.Codec().AppendPDU(nil, &rtm.PDU{Action: rtm.Reply(env.Action, rtm.OutcomeError), ID: env.ID,
		Body: &rtm.PreviousError{Error: string(e.Code), Reason: e.Reason, Previous: prev}})
	if err != nil {
		return c.Internal(err)
	}
	c.Enqueue(frame)
	return nil
}

// deleteOptions serves rtm/delete with read or purge.
func (c *Session) deleteOptions(env *rtm.Envelope, b *rtm.ChannelBody) (any, error) {
	if !b.Purge {
		w := chanlog.Write{Message: chanlog.Message{Payload: payload.Null, Limit: c.app.ChannelLimit()}, Previous: true}
		return c.appendIf(env, b.Channel, w, "", b.Read)
	}
	key := c.app.StoreKey(b.Channel)
	c.drainAcks()
	ctx, cancel := c.edge.RequestContext(c.Context())
	defer cancel()
	prior, err := c.edge.ChanLog.Purge(ctx, key, c.prevBuf)
	c.prevBuf = prior.Data[:0]
	if err != nil {
		return nil, c.writeError(err)
	}
	c.edge.TTL.Disarm(key) // a switch over a purged history fires at nothing
	if !wantsPrevious(b.Read, true) {
		return &rtm.Empty{}, nil
	}
	return c.previousReply("", b.Read, prior)
}

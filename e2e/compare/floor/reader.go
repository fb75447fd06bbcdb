package main

import (
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// reader serves the requests of one connection; its buffers are reused
// from one request to the next.
type reader struct {
	in         []byte
	out        []byte
	value      [3][]byte // the message of a publish, per codec; nil: not encoded yet
	frame      [3][]byte // the data frame of a publish, per codec
	ids        [3]string // the subscription id frame i was built for
	replyFrame []byte
}

// handle serves the request in r.in from c and returns the channel c
// subscribed to, if it did.
func (r *reader) handle(s *server, c *wsClient) *channel {
	cd := codecs[c.codec]
	env, err := cd.Decode(r.in)
	if err != nil {
		r.reply(c, rtm.ActionError, rtm.ID{}, err)
		return nil
	}
	switch env.Action {
	case rtm.ActionPublish, rtm.ActionWrite:
		var b rtm.PublishBody
		if err := cd.DecodeBody(env.Body, &b); err != nil {
			r.reply(c, rtm.Reply(env.Action, rtm.OutcomeError), env.ID, err)
			return nil
		}
		r.publish(s, c, &env, &b)
	case rtm.ActionSubscribe:
		var b rtm.SubscribeBody
		if err := cd.DecodeBody(env.Body, &b); err != nil {
			r.reply(c, rtm.Reply(env.Action, rtm.OutcomeError), env.ID, err)
			return nil
		}
		id := b.SubscriptionID
		if id == "" {
			id = b.Channel
		}
		ch := s.channel(b.Channel)
		pos := ch.add(c, id)
		r.reply(c, rtm.Reply(env.Action, rtm.OutcomeOK), env.ID, &rtm.SubscribeReply{Position: pos.String(), SubscriptionID: id})
		return ch
	case rtm.ActionUnsubscribe:
		var b rtm.UnsubscribeBody
		if err := cd.DecodeBody(env.Body, &b); err != nil {
			r.reply(c, rtm.Reply(env.Action, rtm.OutcomeError), env.ID, err)
			return nil
		}
		// The load generator names its subscriptions after their
		// channels.
		pos, ok := s.channel(b.SubscriptionID).drop(c, b.SubscriptionID)
		if !ok {
			r.reply(c, rtm.Reply(env.Action, rtm.OutcomeError), env.ID, rtm.Errorf(rtm.CodeNotSubscribed, "not subscribed"))
			return nil
		}
		r.reply(c, rtm.Reply(env.Action, rtm.OutcomeOK), env.ID, &rtm.UnsubscribeReply{Position: pos.String(), SubscriptionID: b.SubscriptionID})
	default:
		r.reply(c, rtm.Reply(env.Action, rtm.OutcomeError), env.ID, rtm.Errorf(rtm.CodeInvalidOperation, "the floor serves publish, subscribe and unsubscribe"))
	}
	return nil
}

// publish sends one message to every subscriber of its channel, one write
// each, then acknowledges it. The message is encoded once per codec and
// the frame built once per codec and subscription id.
func (r *reader) publish(s *server, c *wsClient, env *rtm.Envelope, b *rtm.PublishBody) {
	off, subs := s.channel(b.Channel).take()
	after := rtm.Position{Epoch: epoch, Offset: off + 1}
	r.value = [3][]byte{}
	for i := range r.frame {
		r.frame[i], r.ids[i] = r.frame[i][:0], ""
	}
	for _, sb := range subs {
		i := sb.c.codec
		if len(r.frame[i]) == 0 || r.ids[i] != sb.id {
			if r.value[i] == nil {
				v, err := codecs[i].AppendValue(nil, b.Message)
				if err != nil {
					r.reply(c, rtm.Reply(env.Action, rtm.OutcomeError), env.ID, err)
					return
				}
				r.value[i] = v
			}
			r.out = codecs[i].AppendData(r.out[:0], sb.id, after, [][]byte{r.value[i]})
			r.frame[i], r.ids[i] = sb.c.ws.AppendFrame(r.frame[i][:0], opcode(i), r.out), sb.id
		}
		_ = sb.c.ws.Write(r.frame[i]) // a subscriber gone is dropped by its reader
	}
	if !env.ID.IsZero() {
		r.reply(c, rtm.Reply(env.Action, rtm.OutcomeOK), env.ID, &rtm.PositionBody{Position: rtm.Position{Epoch: epoch, Offset: off}.String()})
	}
}

// reply writes a reply to c: body, or the error reply of err.
func (r *reader) reply(c *wsClient, action string, id rtm.ID, body any) {
	if id.IsZero() && action != rtm.ActionError {
		return
	}
	if err, ok := body.(error); ok {
		e, isRTM := rtm.AsError(err)
		if !isRTM {
			e = rtm.Errorf(rtm.CodeInvalidFormat, "bad request")
		}
		body = e.Body()
	}
	out, err := codecs[c.codec].AppendPDU(r.out[:0], &rtm.PDU{Action: action, ID: id, Body: body})
	if err != nil {
		return
	}
	r.out = out
	r.replyFrame = c.ws.AppendFrame(r.replyFrame[:0], opcode(c.codec), out)
	_ = c.ws.Write(r.replyFrame)
}

// opcode is the frame type of codec i: text for JSON, binary otherwise.
func opcode(i int) websocket.Opcode {
	if codecs[i].Binary() {
		return websocket.OpBinary
	}
	return websocket.OpText
}

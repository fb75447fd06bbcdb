package session

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// handler serves one request action. It returns the reply body, or an
// error that becomes the error reply (an *rtm.Error, or an internal error
// mapped to a generic one). A nil body with a nil error means the handler
// queued its reply itself.
type handler func(c *Session, env *rtm.Envelope) (any, error)

// handlers maps request actions to handlers.
var handlers = map[string]handler{
	rtm.ActionPublish:      (*Session).publish,
	rtm.ActionWrite:        (*Session).publish,
	rtm.ActionDelete:       (*Session).delete,
	rtm.ActionRead:         (*Session).read,
	rtm.ActionSubscribe:    (*Session).subscribe,
	rtm.ActionUnsubscribe:  (*Session).unsubscribe,
	rtm.ActionHandshake:    (*Session).authHandshake,
	rtm.ActionAuthenticate: (*Session).authAuthenticate,
	rtm.ActionPresence:     (*Session).presence,
}

// publishes are the actions a journal acknowledges asynchronously.
var publishes = map[string]bool{rtm.ActionPublish: true, rtm.ActionWrite: true, rtm.ActionDelete: true}

// services are the known services, to tell invalid_service from
// invalid_operation.
var services = map[string]bool{"rtm": true, "auth": true}

// handleFrame decodes one frame and serves it. A frame that does not decode
// gets an unsolicited /error; the connection stays usable.
func (c *Session) handleFrame(frame []byte) {
	defer c.recoverFrame()
	env, err := c.Codec().Decode(frame)
	if err != nil {
		// It counts against the rate limit like any request, or garbage
		// would make the edge write error replies as fast as a client can
		// send. It has no id to refuse, so the reader waits (see admit).
		if c.admit(rtm.ID{}) {
			c.replyError(rtm.ActionError, rtm.ID{}, err, true)
		}
		return
	}
	if !c.admit(env.ID) {
		c.replyError(env.Action, env.ID, rtm.Errorf(rtm.CodeTooManyRequests,
			"more than %d requests per second (bursts of %d); slow down", c.edge.Limits.RequestsPerSecond, c.edge.Limits.RequestBurst), false)
		return
	}
	if err := rtm.CheckEnvelope(env.Action, env.ID); err != nil {
		// An action or id that long is not echoed back: the answer is an
		// /error without id, as for a frame that does not decode.
		c.replyError(rtm.ActionError, rtm.ID{}, err, true)
		return
	}
	if c.acks.n.Load() != 0 && !publishes[env.Action] {
		c.drainAcks() // its reply follows those of the publishes before it
	}
	h, ok := handlers[env.Action]
	if !ok {
		c.replyError(env.Action, env.ID, unknownAction(env.Action), false)
		return
	}
	c.expireGrant()
	body, err := h(c, &env)
	switch {
	case err != nil:
		c.replyError(env.Action, env.ID, err, false)
	case body != nil:
		c.reply(env.Action, env.ID, body)
	}
	if c.closing {
		c.queueClose()
	}
}

// wrongFrameType answers a message whose frame type is not its codec's
// (PROTOCOL.md: JSON travels in text frames, cbor and msgpack in binary
// ones) with the unsolicited /error a frame that does not decode gets,
// and serves nothing of it; the connection stays usable. A client that
// sends JSON in binary frames has no subprotocol, or the wrong one, and
// would otherwise be served by luck until it sends a binary codec's
// bytes. Like a frame that does not decode, it counts against the rate
// limit.
func (c *Session) wrongFrameType(op websocket.Opcode) {
	if !c.admit(rtm.ID{}) {
		return
	}
	got, want := "text", "binary"
	if op == websocket.OpBinary {
		got, want = want, got
	}
	c.replyError(rtm.ActionError, rtm.ID{}, rtm.Errorf(rtm.CodeInvalidFormat,
		"%s connections take %s frames; this message came in a %s frame", c.Codec().Name(), want, got), true)
}

// queueClose queues the close item closeAfterReplies prepared, after the
// replies queued so far; past the queue's byte limit, as it is no reply.
func (c *Session) queueClose() {
	if c.closeAfter.code == 0 {
		return
	}
	c.QueueClose(c.closeAfter.code, c.closeAfter.reason)
	c.closeAfter = closeAfter{}
}

// admit applies the request rate limit (a token bucket). A request with an
// id over the limit is refused with too_many_requests; one without id
// cannot be told, so instead of dropping it silently the reader waits for
// a token, which stops reading and lets TCP push back on the client.
func (c *Session) admit(id rtm.ID) bool {
	if c.limiter.allow() {
		return true
	}
	if !id.IsZero() {
		return false
	}
	c.WakeIfDue() // replies queued so far leave before the reader waits
	return c.limiter.wait(c.Context()) == nil
}

// recoverFrame turns a panic while serving one frame into a logged internal
// error and a closed connection, so that no input can take the edge down
// with it. It is a last line of defence: decoders reject bad input with
// errors, and a panic here is a bug to fix.
func (c *Session) recoverFrame() {
	if r := recover(); r != nil {
		c.edge.Logger.Error("panic serving a request", "remote", c.Remote(), "appkey", c.app.Key,
			"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		c.CloseWith(websocket.StatusInternalError, "internal error")
	}
}

func unknownAction(action string) error {
	service, _, _ := strings.Cut(action, "/")
	if !services[service] {
		return rtm.Errorf(rtm.CodeInvalidService, "unknown service %q", service)
	}
	return rtm.Errorf(rtm.CodeInvalidOperation, "unknown operation %q", action)
}

// replyRoom fits the frame of a publish acknowledgment in any codec.
const replyRoom = 96

// reply queues the ok reply of a request; requests without id get none.
func (c *Session) reply(action string, id rtm.ID, body any) {
	if id.IsZero() {
		return
	}
	c.drainAcks()
	// Room for a publish acknowledgment: one allocation, not a few grows.
	// The PDU is the reader's scratch, not a new one per reply; it lets go
	// of body once encoded.
	c.replyPDU = rtm.PDU{Action: rtm.Reply(action, rtm.OutcomeOK), ID: id, Body: body}
	frame, err := c.Codec().AppendPDU(make([]byte, 0, replyRoom), &c.replyPDU)
	c.replyPDU = rtm.PDU{}
	if err != nil {
		c.Internal(err)
		return
	}
	c.Enqueue(frame)
}

// replyError queues an error reply. Requests without id get none, except
// the unsolicited /error for an undecodable frame. Errors that are not
// protocol errors are logged and reported without detail.
func (c *Session) replyError(action string, id rtm.ID, err error, unsolicited bool) {
	e, ok := rtm.AsError(err)
	if !ok {
		c.edge.Logger.Error("request failed", "remote", c.Remote(), "action", action, "err", err)
		e = rtm.Errorf(rtm.CodeInvalidOperation, "internal error")
	}
	c.edge.Counters.Refuse(e.Code)
	if id.IsZero() && !unsolicited {
		return
	}
	c.drainAcks()
	replyAction := rtm.ActionError
	if !unsolicited {
		replyAction = rtm.Reply(action, rtm.OutcomeError)
	}
	frame, err := c.Codec().AppendPDU(nil, &rtm.PDU{Action: replyAction, ID: id, Body: e.Body()})
	if err != nil {
		c.Internal(err)
		return
	}
	c.Enqueue(frame)
}

// decode decodes a request body and refuses string fields past their
// bounds (rtm.LengthChecker). A codec refuses a body with an *rtm.Error
// whose reason package rtm words; any other error is a codec's bug, logged
// and answered with rtm.BodyShape, never with its text.
func (c *Session) decode(env *rtm.Envelope, v any) error {
	if err := c.Codec().DecodeBody(env.Body, v); err != nil {
		if _, ok := rtm.AsError(err); ok {
			return err
		}
		c.edge.Logger.Error("a codec failed on a body with an error that is not a protocol error",
			"codec", c.Codec().Name(), "action", env.Action, "err", err)
		return rtm.Invalid(rtm.BodyShape)
	}
	if l, ok := v.(rtm.LengthChecker); ok {
		return l.CheckLengths()
	}
	return nil
}

// CheckChannel validates a channel name, failing with invalid_format. It
// returns a nil error, not a nil *rtm.Error, for a valid name.
func CheckChannel(name string) error {
	if e := rtm.ChannelFormatError(name); e != nil {
		return e
	}
	return nil
}

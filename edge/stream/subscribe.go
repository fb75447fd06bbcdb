package stream

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/shared/rtm"
)

// ContentTypeNDJSON is the media type of newline-delimited JSON.
const ContentTypeNDJSON = "application/x-ndjson"

// SubscribeEncoder encodes the subscriptions of a stream that the edge
// opened for a client (a GET naming channels), as Server-Sent Events or
// as newline-delimited JSON. Each message is one event (one line)
// {"channel", "position", "message"}; its SSE id is the position every
// channel of the stream continues from, comma-separated in the order of
// the channels, so that the Last-Event-ID of EventSource's reconnect
// resumes them all without gap or duplicate (the subscriptions are made
// with batch 1, so each data PDU's position is that of its message).
//
// The head waits for the replies to the edge's requests (authenticate,
// then a subscribe per channel): a refusal becomes the HTTP status and
// the edge's refusal body instead; a position past retention
// (expired_position) and a subscription that falls out of sync end the
// stream with an "rtm/subscription/error" event (line), as RTM reports
// them.
type SubscribeEncoder struct {
	ndjson    bool
	channels  []string
	positions []string // where each channel's subscription continues
	pending   int      // replies not in yet
	held      []byte   // events that came before the last reply
}

// NewSubscribeEncoder returns the encoder of a stream of channels
// (distinct) that waits for replies replies before its head.
func NewSubscribeEncoder(channels []string, ndjson bool, replies int) *SubscribeEncoder {
	return &SubscribeEncoder{ndjson: ndjson, channels: channels,
		positions: make([]string, len(channels)), pending: replies}
}

// Message implements Encoder. The session speaks JSON to it.
func (e *SubscribeEncoder) Message(w *Wire, _ byte, p []byte) {
	action, body := text(field(p, "action")), field(p, "body")
	switch action {
	case rtm.ActionSubscriptionData:
		e.data(w, body)
	case rtm.ActionSubscriptionInfo:
		e.setPosition(body)
		e.event(w, action, body)
	case rtm.ActionSubscriptionErr:
		e.event(w, action, body)
		e.head(w)
		w.End()
	case "auth/authenticate/ok":
		e.replied(w)
	case "rtm/subscribe/ok":
		e.setPosition(body)
		e.replied(w)
	default:
		if strings.HasSuffix(action, "/error") {
			e.refused(w, body)
		}
	}
}

// data encodes the messages of a data PDU, one event each:
// {"channel", "position", "message"}.
func (e *SubscribeEncoder) data(w *Wire, body []byte) {
	i := slices.Index(e.channels, text(field(body, "subscription_id")))
	if i < 0 {
		return
	}
	e.positions[i] = text(field(body, "position"))
	elements(field(body, "messages"), func(msg []byte) {
		ev := getBuf()
		ev = append(ev, `{"channel":`...)
		ev = appendString(ev, e.channels[i])
		ev = append(ev, `,"position":`...)
		ev = appendString(ev, e.positions[i])
		ev = append(ev, `,"message":`...)
		ev = append(ev, msg...)
		ev = append(ev, '}')
		e.event(w, "", ev)
		putBuf(ev)
	})
}

// setPosition records where a subscription continues, from a reply or
// notice whose body names it.
func (e *SubscribeEncoder) setPosition(body []byte) {
	i := slices.Index(e.channels, text(field(body, "subscription_id")))
	if pos := text(field(body, "position")); i >= 0 && pos != "" {
		e.positions[i] = pos
	}
}

// event appends one event (kind "" for a message) to the body, or holds
// it until the head is out.
func (e *SubscribeEncoder) event(w *Wire, kind string, data []byte) {
	dst := &e.held
	if w.Started() {
		dst = w.Body()
	}
	if e.ndjson {
		*dst = appendLine(*dst, data)
		return
	}
	id := ""
	if kind == "" {
		id = strings.Join(e.positions, ",")
	}
	*dst = appendSSE(*dst, kind, id, data)
}

// replied counts a reply; after the last, the head and what was held go
// out.
func (e *SubscribeEncoder) replied(w *Wire) {
	if e.pending--; e.pending == 0 {
		e.head(w)
	}
}

// head writes the head and the events held for it, once.
func (e *SubscribeEncoder) head(w *Wire) {
	if w.Started() {
		return
	}
	ctype := ContentTypeSSE
	if e.ndjson {
		ctype = ContentTypeNDJSON
	}
	w.Head(ctype)
	*w.Body() = append(*w.Body(), e.held...)
	e.held = nil
}

// refused answers an error reply to one of the edge's requests: the
// positions past retention as RTM reports them, in the stream; anything
// else as the HTTP status of a refusal.
func (e *SubscribeEncoder) refused(w *Wire, body []byte) {
	code := text(field(body, "error"))
	if w.Started() || code == string(rtm.CodeExpiredPosition) || code == string(rtm.CodeOutOfSync) {
		e.event(w, rtm.ActionSubscriptionErr, body)
		e.head(w)
		w.End()
		return
	}
	w.Respond(Status(rtm.Code(code)), code, text(field(body, "reason")))
}

// KeepAlive implements Encoder: an SSE comment, or an empty line, which
// NDJSON readers skip.
func (e *SubscribeEncoder) KeepAlive(w *Wire) {
	switch {
	case !w.Started():
	case e.ndjson:
		*w.Body() = append(*w.Body(), '\n')
	default:
		*w.Body() = append(*w.Body(), ":\n\n"...)
	}
}

// Closing implements Encoder: a "close" event ({"close": ...} line) with
// the session's code and reason; before the head, a 503 refusal.
func (e *SubscribeEncoder) Closing(w *Wire, code int, reason string) {
	if !w.Started() {
		w.Respond(http.StatusServiceUnavailable, string(rtm.CodeUnavailable), reason)
		return
	}
	if e.ndjson {
		*w.Body() = appendLine(*w.Body(), append(append([]byte(`{"close":`), closeJSON(code, reason)...), '}'))
		return
	}
	*w.Body() = appendSSE(*w.Body(), "close", "", closeJSON(code, reason))
}

// appendLine appends data as one line of NDJSON: compacted if it spans
// lines (a message published with white space keeps it in the store).
func appendLine(dst, data []byte) []byte {
	if bytes.ContainsAny(data, "\r\n") {
		var c bytes.Buffer
		if json.Compact(&c, data) == nil {
			data = c.Bytes()
		}
	}
	dst = append(dst, data...)
	return append(dst, '\n')
}

// Status is the HTTP status of a refusal with an RTM error code.
func Status(code rtm.Code) int {
	switch code {
	case rtm.CodeAuthenticationFailed, rtm.CodeAuthMethodNotAllowed, rtm.CodeInvalidAppkey:
		return http.StatusUnauthorized
	case rtm.CodeAuthorizationDenied:
		return http.StatusForbidden
	case rtm.CodeMessageTooLarge:
		return http.StatusRequestEntityTooLarge
	case rtm.CodeTooManyRequests, rtm.CodeSubscriptionQuotaExceeded, rtm.CodeChannelQuotaExceeded:
		return http.StatusTooManyRequests
	case rtm.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

package stream

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// SessionEncoder encodes a whole RTM session as Server-Sent Events, for
// a client that sends its PDUs by POST (the browser client's fallback
// transport): each PDU the session writes is one "message" event, its
// data the PDU as text (json) or base64 (binary codecs); the session's
// close is a "close" event {"code", "reason"}.
type SessionEncoder struct{}

// ContentTypeSSE is the media type of Server-Sent Events.
const ContentTypeSSE = "text/event-stream; charset=utf-8"

// Message implements Encoder.
func (SessionEncoder) Message(w *Wire, op byte, p []byte) {
	if op == opBinary {
		b := w.Body()
		*b = append(*b, "data: "...)
		*b = base64.StdEncoding.AppendEncode(*b, p)
		*b = append(*b, '\n', '\n')
		return
	}
	*w.Body() = appendSSE(*w.Body(), "", "", p)
}

// KeepAlive implements Encoder: an SSE comment, which EventSource ignores.
func (SessionEncoder) KeepAlive(w *Wire) { *w.Body() = append(*w.Body(), ":\n\n"...) }

// Closing implements Encoder.
func (SessionEncoder) Closing(w *Wire, code int, reason string) {
	*w.Body() = appendSSE(*w.Body(), "close", "", closeJSON(code, reason))
}

// closeJSON is {"code": code, "reason": reason}.
func closeJSON(code int, reason string) []byte {
	b := append([]byte(`{"code":`), strconv.Itoa(code)...)
	b = append(b, `,"reason":`...)
	b = appendString(b, reason)
	return append(b, '}')
}

// OpenEvent is the first event of a session stream: "session" with the
// stream's id, which its POSTs name, and the codec its PDUs are in.
func OpenEvent(id, codec string) []byte {
	data, _ := json.Marshal(map[string]string{"id": id, "codec": codec})
	return appendSSE(nil, "session", "", data)
}

package stream

import (
	"bytes"
	"net/http"
	"strconv"
)

// Encoder turns what a session writes into bytes on the HTTP connection.
// A tunnel calls it from the session's writer, one call at a time.
type Encoder interface {
	// Message encodes one data message (op text or binary) into w.
	Message(w *Wire, op byte, p []byte)
	// KeepAlive encodes what keeps an idle stream alive through proxies
	// (the session's ping).
	KeepAlive(w *Wire)
	// Closing encodes the session's close, with its code and reason;
	// the response ends after it.
	Closing(w *Wire, code int, reason string)
}

// Wire is the output of one tunnel write: a response head (once), then
// body bytes, sent as one chunk of a chunked response, or a whole
// response (Respond). Ended says the response is complete.
type Wire struct {
	extra   string // header lines ("Name: value\r\n") every head carries
	raw     []byte // written as they are: the head, a whole response
	body    []byte // sent as one chunk
	head    bool   // the head (or a whole response) has been written
	chunked bool   // the head announced a chunked body
	ended   bool
	// identity: the client speaks HTTP/1.0 (nginx's default to its
	// upstreams), which knows no chunks; the body goes as it is, ended
	// by closing the connection.
	identity bool
	streamed bool // the head announced a body delimited by the close
}

// Body is where an encoder appends the body bytes of this write.
func (w *Wire) Body() *[]byte { return &w.body }

// Head appends the head of a 200 chunked response of ctype, once (to an
// HTTP/1.0 client, one whose body ends with the connection).
func (w *Wire) Head(ctype string) {
	if w.head {
		return
	}
	w.head, w.chunked, w.streamed = true, !w.identity, w.identity
	w.raw = append(w.raw, "HTTP/1.1 200 OK\r\nContent-Type: "...)
	w.raw = append(w.raw, ctype...)
	// no-transform: a proxy must not buffer or compress the stream;
	// X-Accel-Buffering says the same to nginx.
	w.raw = append(w.raw, "\r\n"...)
	w.raw = append(w.raw, w.extra...)
	w.raw = append(w.raw, "Cache-Control: no-store, no-transform\r\nX-Accel-Buffering: no\r\n"...)
	if w.identity {
		w.raw = append(w.raw, "Connection: close\r\n\r\n"...)
	} else {
		w.raw = append(w.raw, "Transfer-Encoding: chunked\r\n\r\n"...)
	}
}

// Started reports whether the head (or a whole response) is written.
func (w *Wire) Started() bool { return w.head }

// End ends the response after this write's body.
func (w *Wire) End() { w.ended = true }

// Respond writes a whole response with status and the JSON body
// {"error": code, "reason": reason}, the edge's refusal shape, and ends
// the response. Only before the head.
func (w *Wire) Respond(status int, code, reason string) {
	body := append([]byte(`{"error":`), appendString(nil, code)...)
	body = append(body, `,"reason":`...)
	body = appendString(body, reason)
	w.RespondJSON(status, append(body, '}'))
}

// RespondJSON writes a whole response with status and the JSON body,
// and ends the response. Only before the head.
func (w *Wire) RespondJSON(status int, body []byte) {
	w.head, w.ended = true, true
	w.raw = append(w.raw, "HTTP/1.1 "...)
	w.raw = strconv.AppendInt(w.raw, int64(status), 10)
	w.raw = append(w.raw, ' ')
	w.raw = append(w.raw, http.StatusText(status)...)
	w.raw = append(w.raw, "\r\n"...)
	w.raw = append(w.raw, w.extra...)
	w.raw = append(w.raw, "Content-Type: application/json\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: "...)
	w.raw = strconv.AppendInt(w.raw, int64(len(body)+1), 10)
	w.raw = append(w.raw, "\r\n\r\n"...)
	w.raw = append(w.raw, body...)
	w.raw = append(w.raw, '\n')
}

// bytes returns what this write puts on the connection: raw, the body
// as a chunk (or as it is, to an HTTP/1.0 client), and the last chunk if
// a chunked response ended.
func (w *Wire) bytes(dst []byte) []byte {
	dst = append(dst, w.raw...)
	if w.streamed {
		return append(dst, w.body...)
	}
	if len(w.body) > 0 && w.chunked {
		dst = strconv.AppendInt(dst, int64(len(w.body)), 16)
		dst = append(dst, "\r\n"...)
		dst = append(dst, w.body...)
		dst = append(dst, "\r\n"...)
	}
	if w.ended && w.chunked {
		dst = append(dst, "0\r\n\r\n"...)
	}
	return dst
}

// appendSSE appends one event: its type (none: "message"), its id (none:
// no id line) and data, one data line per line of data, since a line
// break ends a field; EventSource joins them back with "\n".
func appendSSE(dst []byte, event, id string, data []byte) []byte {
	if event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, event...)
		dst = append(dst, '\n')
	}
	if id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	for {
		i := bytes.IndexAny(data, "\r\n")
		dst = append(dst, "data: "...)
		if i < 0 {
			dst = append(dst, data...)
			dst = append(dst, '\n', '\n')
			return dst
		}
		dst = append(dst, data[:i]...)
		dst = append(dst, '\n')
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

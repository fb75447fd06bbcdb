package websocket

import (
	"errors"
	"strconv"
)

// StatusCode is a close frame's status code (RFC 6455 section 7.4).
type StatusCode int

// The status codes Sluice sends or interprets: its one table of close
// codes, for the edge, the native client and the browser client alike
// (this file also builds for js, see the package doc).
const (
	StatusNormalClosure StatusCode = 1000
	StatusGoingAway     StatusCode = 1001
	StatusProtocolError StatusCode = 1002
	// StatusNoStatusRcvd is reported for a close frame without a code; it
	// is never sent.
	StatusNoStatusRcvd StatusCode = 1005
	// StatusAbnormalClosure is the code of a connection that ended
	// without a close frame either way (the peer vanished, or a frame was
	// cut off: RFC 6455 section 7.1.5); it is never sent.
	StatusAbnormalClosure StatusCode = 1006
	StatusInvalidPayload  StatusCode = 1007
	StatusPolicyViolation StatusCode = 1008
	StatusMessageTooBig   StatusCode = 1009
	StatusInternalError   StatusCode = 1011
	StatusTryAgainLater   StatusCode = 1013
)

// sendable reports whether code may appear in a close frame on the wire.
func (c StatusCode) sendable() bool {
	switch {
	case c >= 1000 && c <= 1003, c >= 1007 && c <= 1014:
		return true
	case c >= 3000 && c <= 4999:
		return true
	}
	return false
}

// CloseError is the peer's close frame: what ReadMessage returns once the
// peer has closed the connection.
type CloseError struct {
	Code   StatusCode
	Reason string
}

func (e *CloseError) Error() string {
	return "websocket closed by peer: status " + strconv.Itoa(int(e.Code)) + ", reason " + strconv.Quote(e.Reason)
}

// CloseStatus returns the code of the CloseError in err's chain, or -1.
func CloseStatus(err error) StatusCode {
	var ce *CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}

// ProtocolError is a violation of RFC 6455 by the peer. The connection
// has been sent a close frame with Code and must be closed.
type ProtocolError struct {
	Code   StatusCode
	Reason string
}

func (e *ProtocolError) Error() string {
	return "websocket protocol error (" + strconv.Itoa(int(e.Code)) + "): " + e.Reason
}

// ErrClosed is returned by writes after the connection was closed or a
// write failed.
var ErrClosed = errors.New("websocket: connection closed")

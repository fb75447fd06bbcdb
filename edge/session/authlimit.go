package session

import (
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// Reasons of the refusals of auth/authenticate past the limits.
const (
	reasonAuthRate   = "too many failed authentications from your address; try again later"
	reasonAuthClosed = "too many failed authentications on this connection"
)

// authAllowed refuses an authentication from a source address past its
// failures, with too_many_requests, before any credential is checked.
func (c *Session) authAllowed() error {
	if c.edge.authLimit.Wait(c.peer) == 0 {
		return nil
	}
	return c.authFailed(rtm.Errorf(rtm.CodeTooManyRequests, "%s", reasonAuthRate), "rate limited")
}

// authFailed counts a failed authentication against the connection and
// its source address, and returns err, the reply. The connection's last
// allowed failure closes it with 1008 once the reply has left.
func (c *Session) authFailed(err error, method string) error {
	c.edge.Counters.AuthFailures.Add(1)
	detail := ""
	if e, ok := rtm.AsError(err); ok && e.Code == rtm.CodeAuthenticationFailed {
		// Satori's reason, word for word (apps compare it): why it failed
		// (wrong hash, expired token, ...) is for the edge's log alone.
		detail = e.Reason
		err = &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: "Unauthenticated"}
	}
	c.edge.Logger.Info("authentication failed", "remote", c.Remote(), "appkey", c.app.Key, "method", method, "detail", detail)
	c.edge.authLimit.Failed(c.peer)
	if c.authFailures++; c.authFailures >= c.edge.Limits.AuthFailures {
		c.closeAfterReplies(websocket.StatusPolicyViolation, reasonAuthClosed)
	}
	return err
}

// closeAfterReplies closes the connection with code and reason once the
// replies queued so far, and the one being made, have been written; the
// reader handles nothing more. For the reader goroutine.
func (c *Session) closeAfterReplies(code websocket.StatusCode, reason string) {
	c.closing = true
	c.closeAfter = closeAfter{code: code, reason: reason}
}

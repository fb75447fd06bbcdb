package session

import (
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// maxAuthPeers bounds the source addresses whose failed authentications
// are remembered, so that a flood of addresses cannot grow the map.
const maxAuthPeers = 1 << 16

// authLimiter rate limits failed authentications per source address: a
// token bucket each, taken from only by failures, so that a client that
// authenticates correctly is never slowed and one that guesses secrets or
// tokens gets a few tries a minute however many connections it opens.
type authLimiter struct {
	every time.Duration // one more try per every
	burst int

	mu    sync.Mutex // guards peers; taken alone
	peers map[string]*rate.Limiter
}

func newAuthLimiter(perMinute int) *authLimiter {
	return &authLimiter{
		every: time.Minute / time.Duration(perMinute),
		burst: perMinute,
		peers: make(map[string]*rate.Limiter),
	}
}

// peerKey is the address part of a remote "host:port".
func peerKey(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}

// allowed reports whether peer may try to authenticate now.
func (l *authLimiter) allowed(peer string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.peers[peer]
	return b == nil || b.Tokens() >= 1
}

// failed takes a try from peer's bucket.
func (l *authLimiter) failed(peer string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.peers[peer]
	if b == nil {
		if len(l.peers) >= maxAuthPeers {
			l.evictLocked()
		}
		b = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.peers[peer] = b
	}
	b.Allow()
}

// evictLocked makes room: it forgets the addresses whose bucket has filled
// up again (they are as if never seen), or, if none has, one at random.
func (l *authLimiter) evictLocked() {
	for k, b := range l.peers {
		if b.Tokens() >= float64(l.burst) {
			delete(l.peers, k)
		}
	}
	for k := range l.peers {
		if len(l.peers) < maxAuthPeers {
			return
		}
		delete(l.peers, k)
	}
}

// Reasons of the refusals of auth/authenticate past the limits.
const (
	reasonAuthRate   = "too many failed authentications from your address; try again later"
	reasonAuthClosed = "too many failed authentications on this connection"
)

// authAllowed refuses an authentication from a source address past its
// failures, with too_many_requests, before any credential is checked.
func (c *Session) authAllowed() error {
	if c.edge.authLimit.allowed(c.peer) {
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
	c.edge.authLimit.failed(c.peer)
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

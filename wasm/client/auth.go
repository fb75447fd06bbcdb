package client

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// authenticate takes the configured role on a fresh connection: a
// role_secret handshake, or the jwt extension, or nothing (the app's
// default role).
func (c *Client) authenticate(ctx context.Context, cn *conn) error {
	switch {
	case c.opts.Token != "" || c.opts.TokenFunc != nil:
		return c.authenticateToken(ctx, cn)
	case c.opts.Role != "":
		hs := &rtm.HandshakeBody{Method: rtm.MethodRoleSecret, Data: rtm.HandshakeData{Role: c.opts.Role}}
		var reply rtm.HandshakeReply
		if err := cn.request(ctx, rtm.ActionHandshake, hs, &reply); err != nil {
			return errtext.Wrap("client: handshake for role "+strconv.Quote(c.opts.Role), err)
		}
		hash := roleSecretHash(c.opts.RoleSecret, reply.Data.Nonce)
		body := &rtm.AuthenticateBody{Method: rtm.MethodRoleSecret, Credentials: rtm.Credentials{Hash: hash}}
		if err := cn.request(ctx, rtm.ActionAuthenticate, body, nil); err != nil {
			return errtext.Wrap("client: authenticate as role "+strconv.Quote(c.opts.Role), err)
		}
	}
	return nil
}

// authenticateToken authenticates cn with a JWT, Options.TokenFunc's if
// set, and notes when it expires so that the supervisor refreshes it.
func (c *Client) authenticateToken(ctx context.Context, cn *conn) error {
	tok := c.opts.Token
	if f := c.opts.TokenFunc; f != nil {
		var err error
		if tok, err = f(ctx); err != nil {
			return errtext.Wrap("client: get a token", err)
		}
	}
	body := &rtm.AuthenticateBody{Method: rtm.MethodJWT, Credentials: rtm.Credentials{Token: tok}}
	if err := cn.request(ctx, rtm.ActionAuthenticate, body, nil); err != nil {
		return errtext.Wrap("client: authenticate with token", err)
	}
	cn.tokenExp = tokenExpiry(tok)
	return nil
}

// refreshDelay returns when to fetch a new token for one expiring at exp:
// a quarter of its remaining life before exp, at most a minute before;
// ok is false when there is nothing to refresh (no TokenFunc, no exp
// known, or already expired).
func (c *Client) refreshDelay(exp time.Time) (time.Duration, bool) {
	if c.opts.TokenFunc == nil || exp.IsZero() {
		return 0, false
	}
	left := time.Until(exp)
	if left <= 0 {
		return 0, false
	}
	return left - min(left/4, time.Minute), true
}

// refresh authenticates cn again with a new token before the current one
// expires; on the supervisor goroutine. A failure is logged and retried
// while the current token lasts: the edge ends what the token alone
// allowed at its exp.
func (c *Client) refresh(cn *conn) {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.DialTimeout)
	defer cancel()
	if err := c.authenticateToken(ctx, cn); err != nil {
		c.log.Warn("sluice client: token refresh failed", "err", err)
		if left := time.Until(cn.tokenExp); left > 0 {
			// Try again halfway to exp, not at once: a failing token
			// source is not hammered.
			cn.retryAt = time.Now().Add(left / 2)
		}
	}
}

// tokenExpiry reads the exp claim of a JWT without verifying it (the edge
// does): when the client must refresh, zero if it cannot tell.
func tokenExpiry(tok string) time.Time {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return time.Time{}
	}
	exp, ok := payloadExp(parts[1])
	if !ok {
		return time.Time{}
	}
	return time.Unix(0, int64(exp*1e9))
}

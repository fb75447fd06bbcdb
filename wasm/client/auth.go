package client

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/shared/rtm"
)

// authenticate takes the configured role on a fresh connection: a
// role_secret handshake, or the jwt extension, or nothing (the app's
// default role).
func (c *Client) authenticate(ctx context.Context, cn *conn) error {
	switch {
	case c.opts.Token != "":
		body := &rtm.AuthenticateBody{Method: rtm.MethodJWT, Credentials: rtm.Credentials{Token: c.opts.Token}}
		if err := cn.request(ctx, rtm.ActionAuthenticate, body, nil); err != nil {
			return fmt.Errorf("client: authenticate with token: %w", err)
		}
	case c.opts.Role != "":
		hs := &rtm.HandshakeBody{Method: rtm.MethodRoleSecret, Data: rtm.HandshakeData{Role: c.opts.Role}}
		var reply rtm.HandshakeReply
		if err := cn.request(ctx, rtm.ActionHandshake, hs, &reply); err != nil {
			return fmt.Errorf("client: handshake for role %q: %w", c.opts.Role, err)
		}
		hash := roleSecretHash(c.opts.RoleSecret, reply.Data.Nonce)
		body := &rtm.AuthenticateBody{Method: rtm.MethodRoleSecret, Credentials: rtm.Credentials{Hash: hash}}
		if err := cn.request(ctx, rtm.ActionAuthenticate, body, nil); err != nil {
			return fmt.Errorf("client: authenticate as role %q: %w", c.opts.Role, err)
		}
	}
	return nil
}

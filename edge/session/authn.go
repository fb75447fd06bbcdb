package session

import (
	"time"

	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/shared/rtm"
)

// authHandshake serves auth/handshake: a fresh nonce for role_secret, also
// for a role that does not exist, so roles cannot be enumerated.
func (c *Session) authHandshake(env *rtm.Envelope) (any, error) {
	var b rtm.HandshakeBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if b.Method != rtm.MethodRoleSecret {
		return nil, rtm.Errorf(rtm.CodeAuthMethodNotAllowed, "handshake method %q is not supported; use role_secret", b.Method)
	}
	nonce, err := c.handshake.Begin(b.Data.Role)
	if err != nil {
		return nil, err
	}
	return &rtm.HandshakeReply{Data: rtm.NonceData{Nonce: nonce}}, nil
}

// authAuthenticate serves auth/authenticate with role_secret or a JWT.
func (c *Session) authAuthenticate(env *rtm.Envelope) (any, error) {
	var b rtm.AuthenticateBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if err := c.authAllowed(); err != nil {
		return nil, err
	}
	switch b.Method {
	case rtm.MethodRoleSecret:
		role, err := c.handshake.Authenticate(c.app.App, b.Credentials.Hash)
		if err != nil {
			return nil, c.authFailed(err, b.Method)
		}
		c.setGrant(role.Name, role.Permissions, time.Time{})
		c.pres.EndGrantUser() // a role proves no user
	case rtm.MethodJWT:
		g, err := auth.Verify(c.app.App, b.Credentials.Token, time.Now())
		if err != nil {
			return nil, c.authFailed(err, b.Method)
		}
		c.setGrant(g.Role, g.Permissions, g.Expires)
		if g.Subject != "" {
			c.pres.SetUser(g.Subject, g.Info, true)
		} else {
			c.pres.EndGrantUser()
		}
	default:
		return nil, rtm.Errorf(rtm.CodeAuthMethodNotAllowed, "authentication method %q is not supported", b.Method)
	}
	return &rtm.Empty{}, nil
}

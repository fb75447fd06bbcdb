// Package auth authenticates RTM connections to an app: the role_secret
// method of RTM v2 (a handshake that hands out a nonce, then an HMAC-MD5 of
// it keyed with the role's secret) and Sluice's jwt extension (a signed,
// expiring token naming a role and/or channel permissions).
//
// Every failure a client can see is an *rtm.Error. Reasons say what kind of
// failure it was, never which roles exist nor anything about keys.
package auth

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/shared/rtm"
)

// NonceBytes is the number of random bytes in a nonce (24 base64
// characters without padding).
const NonceBytes = 18

// dummySecret stands in for the secret of a role that does not exist or has
// none, so that such a role costs the same HMAC as a real one. Its result is
// never accepted, whatever the client sends.
const dummySecret = "sluice: no such role, no such secret, no match"

// Reasons of authentication_failed; the same for an unknown role, a role
// without secret and a wrong hash, so a client cannot enumerate roles.
const (
	reasonBadHash     = "invalid role or hash"
	reasonNoHandshake = "no role_secret handshake in progress"
)

// NewNonce returns a fresh random nonce for a role_secret handshake: 18
// bytes from crypto/rand in standard base64.
func NewNonce() (string, error) {
	var b [NonceBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("auth: nonce: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}

// Hash returns the role_secret proof for a nonce:
// base64(HMAC-MD5(key = secret, msg = nonce)), as RTM v2 SDKs compute it.
func Hash(secret, nonce string) string {
	mac := hmac.New(md5.New, []byte(secret))
	mac.Write([]byte(nonce))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// Handshake is one connection's role_secret state: the role and nonce of
// the handshake in progress, if any. The zero value has none. It is not
// safe for concurrent use; a connection handles its auth requests in order.
type Handshake struct {
	role    string
	nonce   string
	pending bool
}

// Begin starts a handshake for role and returns its nonce. It answers the
// same way whether the role exists or not, so a client cannot enumerate
// roles; a new handshake replaces one in progress.
func (h *Handshake) Begin(role string) (nonce string, err error) {
	nonce, err = NewNonce()
	if err != nil {
		h.reset()
		return "", err
	}
	h.role, h.nonce, h.pending = role, nonce, true
	return nonce, nil
}

// Pending reports whether a handshake is waiting for its authenticate.
func (h *Handshake) Pending() bool { return h.pending }

// Authenticate checks the hash a client computed from the nonce of the
// handshake in progress, and returns the role it proves. The nonce is used
// up whether the check succeeds or fails. An unknown role, a role without
// secret and a wrong hash all cost one HMAC and one constant-time
// comparison and fail with the same authentication_failed error.
func (h *Handshake) Authenticate(a *app.App, hash string) (*app.Role, error) {
	if !h.pending {
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonNoHandshake}
	}
	roleName, nonce := h.role, h.nonce
	h.reset()
	role, found := a.Role(roleName)
	secret := dummySecret
	if found && role.Secret != "" {
		secret = role.Secret
	}
	match := hmac.Equal([]byte(Hash(secret, nonce)), []byte(hash))
	if !match || !found || role.Secret == "" {
		return nil, &rtm.Error{Code: rtm.CodeAuthenticationFailed, Reason: reasonBadHash}
	}
	return role, nil
}

// reset forgets the handshake in progress.
func (h *Handshake) reset() { h.role, h.nonce, h.pending = "", "", false }

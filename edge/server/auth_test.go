package server_test

import (
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func roleHash(secret, nonce string) string {
	m := hmac.New(md5.New, []byte(secret))
	m.Write([]byte(nonce))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// handshake runs auth/handshake for role and returns the nonce.
func (c *rawClient) handshake(id int, role string) string {
	c.t.Helper()
	body := c.expectOK("auth/handshake", id, map[string]any{"method": "role_secret", "data": map[string]any{"role": role}})
	data, _ := body["data"].(map[string]any)
	nonce, _ := data["nonce"].(string)
	if nonce == "" {
		c.t.Fatalf("handshake reply without nonce: %v", body)
	}
	return nonce
}

func authBody(hash string) map[string]any {
	return map[string]any{"method": "role_secret", "credentials": map[string]any{"hash": hash}}
}

func TestRoleSecretAuth(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectError("rtm/publish", 1, map[string]any{"channel": "$sys.x", "message": 1}, "authorization_denied")
	nonce := c.handshake(2, "admin")
	c.expectOK("auth/authenticate", 3, authBody(roleHash(adminSecret, nonce)))
	c.expectOK("rtm/publish", 4, map[string]any{"channel": "$sys.x", "message": 1})
	// The nonce is single-use.
	c.expectError("auth/authenticate", 5, authBody(roleHash(adminSecret, nonce)), "authentication_failed")
}

func TestRoleSecretFailuresLookAlike(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	wrong := c.expectError("auth/authenticate", 2, authBody(roleHash("guess", c.handshake(1, "admin"))), "authentication_failed")
	unknown := c.expectError("auth/authenticate", 4, authBody(roleHash("guess", c.handshake(3, "ghost"))), "authentication_failed")
	if wrong["reason"] != unknown["reason"] {
		t.Fatalf("wrong hash and unknown role are distinguishable: %q vs %q", wrong["reason"], unknown["reason"])
	}
	c.expectError("auth/authenticate", 5, authBody("AAAA"), "authentication_failed") // no handshake
	c.expectError("auth/handshake", 6, map[string]any{"method": "password", "data": map[string]any{"role": "admin"}}, "auth_method_not_allowed")
	c.expectError("auth/authenticate", 7, map[string]any{"method": "password"}, "auth_method_not_allowed")
	// Still the default role.
	c.expectError("rtm/publish", 8, map[string]any{"channel": "$sys.x", "message": 1}, "authorization_denied")
}

func TestPermissionsByPattern(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	nonce := c.handshake(1, "reader")
	c.expectOK("auth/authenticate", 2, authBody(roleHash("reader-secret", nonce)))
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "news.sport"})
	c.expectOK("rtm/read", 4, map[string]any{"channel": "news"})
	c.expectError("rtm/subscribe", 5, map[string]any{"channel": "chat"}, "authorization_denied")
	c.expectError("rtm/publish", 6, map[string]any{"channel": "news.sport", "message": 1}, "authorization_denied")
	c.expectError("rtm/delete", 7, map[string]any{"channel": "news.sport"}, "authorization_denied")
	c.expectError("rtm/write", 8, map[string]any{"channel": "news.sport", "message": 1}, "authorization_denied")
}

func signJWT(t *testing.T, key []byte, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jwtBody(token string) map[string]any {
	return map[string]any{"method": "jwt", "credentials": map[string]any{"token": token}}
}

func TestJWTAuth(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	now := time.Now()
	tests := []struct {
		name   string
		token  string
		code   string // "" for success
		pubOK  string // a channel the grant may publish to
		pubBad string // one it may not
	}{
		{name: "role claim", token: signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "admin", "exp": now.Add(time.Hour).Unix()}),
			pubOK: "$sys.a"},
		{name: "explicit patterns", token: signJWT(t, []byte(jwtSecret), jwt.MapClaims{"publish": []string{"room.*"}, "exp": now.Add(time.Hour).Unix()}),
			pubOK: "room.1", pubBad: "$sys.a"},
		{name: "expired", token: signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "admin", "exp": now.Add(-time.Minute).Unix()}),
			code: "authentication_failed"},
		{name: "forged", token: signJWT(t, []byte("not-the-key-not-the-key-not-the-k"), jwt.MapClaims{"role": "admin", "exp": now.Add(time.Hour).Unix()}),
			code: "authentication_failed"},
		{name: "no exp", token: signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "admin"}),
			code: "authentication_failed"},
		{name: "garbage", token: "not.a.jwt", code: "authentication_failed"},
		{name: "unknown role", token: signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "ghost", "exp": now.Add(time.Hour).Unix()}),
			code: "authentication_failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := e.dial(t, "test", "")
			if tt.code != "" {
				c.expectError("auth/authenticate", 1, jwtBody(tt.token), tt.code)
				c.expectError("rtm/publish", 2, map[string]any{"channel": "$sys.a", "message": 1}, "authorization_denied")
				return
			}
			c.expectOK("auth/authenticate", 1, jwtBody(tt.token))
			c.expectOK("rtm/publish", 2, map[string]any{"channel": tt.pubOK, "message": 1})
			if tt.pubBad != "" {
				c.expectError("rtm/publish", 3, map[string]any{"channel": tt.pubBad, "message": 1}, "authorization_denied")
			}
		})
	}
}

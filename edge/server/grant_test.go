package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// adminToken signs a token for the admin role expiring at exp.
func adminToken(t *testing.T, exp time.Time) string {
	t.Helper()
	return signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "admin", "exp": exp.Unix()})
}

// TestExpiredGrantEndsSubscriptions subscribes to a reserved channel under
// a short JWT and sends nothing more: at the token's exp the subscription
// ends with authorization_denied saying so, and no later message of the
// channel reaches the client, while a subscription the default role
// allows goes on.
func TestExpiredGrantEndsSubscriptions(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	exp := time.Now().Add(2 * time.Second)
	c.expectOK("auth/authenticate", 1, jwtBody(adminToken(t, exp)))
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "$sys.x"})
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "open"})
	if _, err := e.srv.Publish("test", "$sys.x", "before"); err != nil {
		t.Fatal(err)
	}
	c.recvData("$sys.x", 1)

	p := c.recvWithin(5 * time.Second) // the token lives at most 2 s
	if p.Action != "rtm/subscription/error" || p.Body["error"] != "authorization_denied" ||
		p.Body["subscription_id"] != "$sys.x" {
		t.Fatalf("at the token's exp: got %s %v, want rtm/subscription/error authorization_denied for $sys.x", p.Action, p.Body)
	}
	if r, _ := p.Body["reason"].(string); !strings.Contains(r, "expired") {
		t.Fatalf("reason %q does not say the token expired", r)
	}
	if time.Now().Before(exp.Truncate(time.Second)) {
		t.Fatalf("the subscription ended before the token's exp")
	}
	for _, ch := range []string{"$sys.x", "open"} {
		if _, err := e.srv.Publish("test", ch, "after"); err != nil {
			t.Fatal(err)
		}
	}
	// Only the channel the default role may see still delivers.
	msgs, _ := c.recvData("open", 1)
	if msgs[0] != "after" {
		t.Fatalf("open got %v", msgs)
	}
	c.expectError("rtm/subscribe", 4, map[string]any{"channel": "$sys.x"}, "authorization_denied")
}

// TestRefreshedGrantKeepsSubscriptions authenticates again with a new
// token before the first expires: the subscription outlives the first
// token's exp.
func TestRefreshedGrantKeepsSubscriptions(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	exp := time.Now().Add(time.Second)
	c.expectOK("auth/authenticate", 1, jwtBody(adminToken(t, exp)))
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "$sys.x"})
	c.expectOK("auth/authenticate", 3, jwtBody(adminToken(t, time.Now().Add(time.Hour))))
	// The first token's timer would have fired by then.
	time.Sleep(time.Until(exp) + 300*time.Millisecond)
	if _, err := e.srv.Publish("test", "$sys.x", "after the first exp"); err != nil {
		t.Fatal(err)
	}
	c.recvData("$sys.x", 1) // fails on a subscription/error
	c.expectOK("rtm/publish", 4, map[string]any{"channel": "$sys.y", "message": 1})
}

// TestNarrowerRoleEndsSubscriptions authenticates as a role that may not
// see a channel subscribed to under the previous one: that subscription
// ends with authorization_denied.
func TestNarrowerRoleEndsSubscriptions(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("auth/authenticate", 1, jwtBody(adminToken(t, time.Now().Add(time.Hour))))
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "$sys.x"})
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "news"})
	nonce := c.handshake(4, "reader")
	c.send("auth/authenticate", 5, authBody(roleHash("reader-secret", nonce)))
	var gotErr, gotOK bool
	for !gotErr || !gotOK {
		p := c.recv()
		switch {
		case p.Action == "auth/authenticate/ok":
			gotOK = true
		case p.Action == "rtm/subscription/error" && p.Body["subscription_id"] == "$sys.x" &&
			p.Body["error"] == "authorization_denied":
			gotErr = true
		default:
			t.Fatalf("got %s %v", p.Action, p.Body)
		}
	}
	if _, err := e.srv.Publish("test", "news", 1); err != nil {
		t.Fatal(err)
	}
	c.recvData("news", 1)
}

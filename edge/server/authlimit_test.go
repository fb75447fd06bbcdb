package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
)

// expectClosed reads the edge's close of the connection, with nothing
// before it, and checks its code and that its reason mentions want.
func (c *rawClient) expectClosed(code websocket.StatusCode, want string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err == nil {
		c.t.Fatalf("got %s, want the connection closed with %d", data, code)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != code || !strings.Contains(ce.Reason, want) {
		c.t.Fatalf("read: %v, want close %d with a reason about %q", err, code, want)
	}
}

// dialFrom connects from the loopback source address ip (127.0.0.2, ...).
func (e *edge) dialFrom(t *testing.T, ip string) *rawClient {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", &websocket.DialOptions{HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatalf("dial from %s: %v", ip, err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &rawClient{t: t, ws: ws}
}

// TestRepeatedAuthFailuresClose guesses tokens on one connection: each
// guess is answered, and the fifth closes the connection with 1008.
func TestRepeatedAuthFailuresClose(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	for i := 1; i <= 5; i++ {
		c.expectError("auth/authenticate", i, jwtBody("guess.number."+itoa(i)), "authentication_failed")
	}
	c.expectClosed(websocket.StatusPolicyViolation, "failed authentications")
}

// TestAuthFailuresRateLimitedPerAddress spreads guesses over connections
// from one address: past the address's budget even a valid token is
// refused with too_many_requests, while another address authenticates.
func TestAuthFailuresRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.AuthFailuresPerMinute = 8 })
	valid := jwtBody(adminToken(t, time.Now().Add(time.Hour)))
	first := e.dial(t, "test", "")
	for i := 1; i <= 5; i++ {
		first.expectError("auth/authenticate", i, jwtBody("guess"), "authentication_failed")
	}
	first.expectClosed(websocket.StatusPolicyViolation, "failed authentications")
	second := e.dial(t, "test", "")
	for i := 1; i <= 3; i++ {
		second.expectError("auth/authenticate", i, jwtBody("guess"), "authentication_failed")
	}
	body := second.expectError("auth/authenticate", 4, valid, "too_many_requests")
	if r := body["reason"].(string); !strings.Contains(r, "address") {
		t.Fatalf("reason %q does not say the address is limited", r)
	}
	// Still the default role: the valid token was not taken.
	second.expectError("rtm/publish", 5, map[string]any{"channel": "$sys.x", "message": 1}, "authorization_denied")
	other := e.dialFrom(t, "127.0.0.2")
	other.expectOK("auth/authenticate", 1, valid)
	other.expectOK("rtm/publish", 2, map[string]any{"channel": "$sys.x", "message": 1})
}

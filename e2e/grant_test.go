package e2e

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// grantToken mints a token allowing the reserved channels "$grant.*",
// which e2eApp's default role may not see, for life.
func grantToken(t *testing.T, life time.Duration) string {
	t.Helper()
	tok, err := auth.Mint([]byte(jwtSecret), auth.Claims{Subscribe: []string{"$grant.*"}, Expires: time.Now().Add(life)})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// subscribeGrant subscribes c to $grant.x and returns its inbox and the
// channel its OnError sends to.
func subscribeGrant(t *testing.T, c *client.Client) (*inbox, <-chan error) {
	t.Helper()
	var in inbox
	errs := make(chan error, 1)
	_, err := c.Subscribe(ctxFor(t), "$grant.x", &client.SubscribeOptions{
		OnError: func(err error) { errs <- err },
	}, in.handle)
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	return &in, errs
}

// TestTokenFuncRefreshes gives the client a token source whose tokens
// live 2 s: the client fetches new ones before each expires, and its
// subscription to a channel only the tokens allow goes on receiving past
// several of their lifetimes.
func TestTokenFuncRefreshes(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	var calls atomic.Int32
	c := dial(t, e.url, client.Options{TokenFunc: func(context.Context) (string, error) {
		calls.Add(1)
		return grantToken(t, 2*time.Second), nil
	}})
	in, errs := subscribeGrant(t, c)
	// The third token comes a quarter of the second's life before its
	// exp: the first has expired by then.
	poll.Until(t, "two refreshes", func() bool { return calls.Load() >= 3 })
	if _, err := e.srv.Publish("e2e", "$grant.x", "after"); err != nil {
		t.Fatal(err)
	}
	in.expect(t, []string{"after"})
	select {
	case err := <-errs:
		t.Fatalf("the subscription ended: %v", err)
	default:
	}
}

// TestStaticTokenExpires is the same without a token source: at the
// token's exp the edge ends the subscription with authorization_denied,
// which reaches OnError.
func TestStaticTokenExpires(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	c := dial(t, e.url, client.Options{Token: grantToken(t, 2*time.Second)})
	_, errs := subscribeGrant(t, c)
	err := poll.Recv(t, "the subscription's end", errs)
	if code := codeOf(err); code != rtm.CodeAuthorizationDenied {
		t.Fatalf("OnError got %v, want authorization_denied", err)
	}
}

// TestTokenFuncOnReconnect cuts the client's connection: it authenticates
// the new one with a token fetched anew, and its subscription to a
// channel only the token allows resumes.
func TestTokenFuncOnReconnect(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	p := newProxy(t, e.hostPort())
	var calls atomic.Int32
	c := dial(t, p.url(), client.Options{TokenFunc: func(context.Context) (string, error) {
		calls.Add(1)
		return grantToken(t, time.Hour), nil
	}})
	in, _ := subscribeGrant(t, c)
	p.cut()
	poll.Until(t, "a new token for the new connection", func() bool {
		return calls.Load() >= 2 && c.State() == client.Connected
	})
	if _, err := e.srv.Publish("e2e", "$grant.x", "after the reconnect"); err != nil {
		t.Fatal(err)
	}
	in.expect(t, []string{"after the reconnect"})
}

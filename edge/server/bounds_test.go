package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
)

// pipeline sends n requests built by body, in rounds of 500 so that
// neither side's buffers fill, and checks every reply is ok.
func (c *rawClient) pipeline(action string, n int, body func(i int) map[string]any) {
	c.t.Helper()
	const round = 500
	for from := 0; from < n; from += round {
		to := min(from+round, n)
		for i := from; i < to; i++ {
			c.send(action, i+1, body(i))
		}
		for i := from; i < to; i++ {
			if p := c.recv(); p.Action != action+"/ok" {
				c.t.Fatalf("%s %d: got %s %v", action, i, p.Action, p.Body)
			}
		}
	}
}

// TestReadsOfMissingChannelsCreateNothing reads 10,000 channels that do
// not exist: each read answers message null, and the store holds no
// channel afterwards (the attack held one per read for 70 s).
func TestReadsOfMissingChannelsCreateNothing(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond = 1 << 20 })
	c := e.dial(t, "test", "")
	c.pipeline("rtm/read", 10_000, func(i int) map[string]any {
		return map[string]any{"channel": "missing." + itoa(i)}
	})
	if n := e.srv.Store().Stats().Channels; n != 0 {
		t.Fatalf("%d channels after reads of missing ones, want 0", n)
	}
	// A read of a missing channel still answers null, at a position
	// naming no message.
	r := c.expectOK("rtm/read", 20_001, map[string]any{"channel": "missing.x"})
	if r["message"] != nil || r["position"] != "0:0" {
		t.Fatalf("read of a missing channel: %v", r)
	}
}

// TestSubscriptionsLeaveNothingBehind subscribes to 1,000 distinct
// channels and unsubscribes: a sweep TTL + grace later forgets them all
// (they linger that long for resuming subscribers), while a channel
// holding a message, within its history, stays.
func TestSubscriptionsLeaveNothingBehind(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		o.Limits.RequestsPerSecond, o.Limits.SubscriptionsPerConnection = 1<<20, 2000
	})
	c := e.dial(t, "test", "")
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "kept", "message": "v"})
	c.pipeline("rtm/subscribe", 1000, func(i int) map[string]any {
		return map[string]any{"channel": "sub." + itoa(i)}
	})
	c.expectOK("rtm/subscribe", 2000, map[string]any{"channel": "kept"})
	if n := e.srv.Store().Stats().Channels; n != 1001 {
		t.Fatalf("%d channels while subscribed, want 1001", n)
	}
	c.pipeline("rtm/unsubscribe", 1000, func(i int) map[string]any {
		return map[string]any{"subscription_id": "sub." + itoa(i)}
	})
	c.expectOK("rtm/unsubscribe", 2001, map[string]any{"subscription_id": "kept"})
	e.clock.Advance(store.DefaultTTL + store.DefaultGrace + time.Second)
	e.srv.Store().Sweep()
	if n := e.srv.Store().Stats().Channels; n != 1 {
		t.Fatalf("%d channels after unsubscribing and a sweep, want 1 (the one with a message)", n)
	}
	if r := c.expectOK("rtm/read", 2002, map[string]any{"channel": "kept"}); r["message"] != "v" {
		t.Fatalf("read kept: %v", r)
	}
}

// TestStringFieldsBounded sends each bounded string field one byte past
// its bound: each request is refused with invalid_format naming the field,
// without echoing it; at the bound the request is served as usual.
func TestStringFieldsBounded(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	long := func(n int) string { return strings.Repeat("0", n) }
	tests := []struct {
		name   string
		action string
		body   func(v string) map[string]any
		field  string
		max    int
		atMax  string // the outcome at the bound: "ok" or an error code
	}{
		{name: "subscription_id", action: "rtm/subscribe", field: "subscription_id", max: 256, atMax: "ok",
			body: func(v string) map[string]any { return map[string]any{"channel": "c", "subscription_id": v} }},
		{name: "subscribe position", action: "rtm/subscribe", field: "position", max: 41, atMax: "invalid_format",
			body: func(v string) map[string]any { return map[string]any{"channel": "c", "position": v} }},
		{name: "filter", action: "rtm/subscribe", field: "filter", max: 16 << 10, atMax: "invalid_filter",
			body: func(v string) map[string]any { return map[string]any{"subscription_id": "f", "filter": v} }},
		{name: "read position", action: "rtm/read", field: "position", max: 41, atMax: "invalid_format",
			body: func(v string) map[string]any { return map[string]any{"channel": "c", "position": v} }},
		{name: "unsubscribe id", action: "rtm/unsubscribe", field: "subscription_id", max: 256, atMax: "not_subscribed",
			body: func(v string) map[string]any { return map[string]any{"subscription_id": v} }},
		{name: "handshake method", action: "auth/handshake", field: "method", max: 64, atMax: "auth_method_not_allowed",
			body: func(v string) map[string]any {
				return map[string]any{"method": v, "data": map[string]any{"role": "admin"}}
			}},
		{name: "handshake role", action: "auth/handshake", field: "data.role", max: 256, atMax: "ok",
			body: func(v string) map[string]any {
				return map[string]any{"method": "role_secret", "data": map[string]any{"role": v}}
			}},
		{name: "authenticate method", action: "auth/authenticate", field: "method", max: 64, atMax: "auth_method_not_allowed",
			body: func(v string) map[string]any { return map[string]any{"method": v} }},
		{name: "hash", action: "auth/authenticate", field: "credentials.hash", max: 256, atMax: "authentication_failed",
			body: func(v string) map[string]any {
				return map[string]any{"method": "role_secret", "credentials": map[string]any{"hash": v}}
			}},
		{name: "token", action: "auth/authenticate", field: "credentials.token", max: 16 << 10, atMax: "authentication_failed",
			body: func(v string) map[string]any { return jwtBody(v) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := e.dial(t, "test", "")
			got := c.expectError(tt.action, 1, tt.body(long(tt.max+1)), "invalid_format")
			reason := got["reason"].(string)
			if !strings.Contains(reason, "'"+tt.field+"'") || len(reason) > 100 {
				t.Fatalf("reason %q: want the field named, not echoed", reason)
			}
			p := c.request(tt.action, 2, tt.body(long(tt.max)))
			outcome := "ok"
			if strings.HasSuffix(p.Action, "/error") {
				outcome, _ = p.Body["error"].(string)
			}
			if outcome != tt.atMax {
				t.Fatalf("at the bound: %s %v, want %s", p.Action, p.Body, tt.atMax)
			}
		})
	}
}

// TestEnvelopeBounded sends an action and a string id past their bounds:
// each gets an /error invalid_format that echoes neither.
func TestEnvelopeBounded(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	for _, frame := range []string{
		`{"action":"rtm/` + strings.Repeat("x", 61) + `","id":1,"body":{}}`,
		`{"action":"rtm/publish","id":"` + strings.Repeat("i", 257) + `","body":{"channel":"c","message":1}}`,
	} {
		c.sendText(frame)
		p := c.recv()
		if p.Action != "/error" || p.Body["error"] != "invalid_format" || p.ID != nil {
			t.Fatalf("got %s id %v %v, want /error invalid_format without id", p.Action, p.ID, p.Body)
		}
	}
	c.expectOK("rtm/publish", 3, map[string]any{"channel": "c", "message": 1})
}

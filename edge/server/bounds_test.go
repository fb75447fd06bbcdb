package server_test

import (
	"testing"

	"github.com/sluicehq/sluice/edge/server"
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
// channels and unsubscribes: the store's next sweep forgets them all
// without the clock moving, while a channel holding a message stays.
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
	e.srv.Store().Sweep()
	if n := e.srv.Store().Stats().Channels; n != 1 {
		t.Fatalf("%d channels after unsubscribing and a sweep, want 1 (the one with a message)", n)
	}
	if r := c.expectOK("rtm/read", 2002, map[string]any{"channel": "kept"}); r["message"] != "v" {
		t.Fatalf("read kept: %v", r)
	}
}

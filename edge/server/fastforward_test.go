package server_test

import (
	"testing"
)

// TestSubscribeFastForwardAtLostPosition checks a subscribe at a position
// whose messages are gone (here: of another history, as a client moving
// from another edge sends): without fast_forward it fails with
// expired_position; with it, the subscription starts at the oldest stored
// message, and the client is told so after the ok reply, before any data.
func TestSubscribeFastForwardAtLostPosition(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	pub := e.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "ff", "message": "kept"})
	lost := "1:5" // epoch 1 is no channel's here

	c.expectError("rtm/subscribe", 2, map[string]any{"channel": "ff", "position": lost}, "expired_position")

	ok := c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "ff", "position": lost, "fast_forward": true})
	info := c.recv()
	if info.Action != "rtm/subscription/info" || info.Body["info"] != "fast_forward" ||
		info.Body["subscription_id"] != "ff" || info.Body["position"] != ok["position"] || info.Body["reason"] == "" {
		t.Fatalf("after the ok %v: %s %v, want a fast_forward info at the ok's position", ok, info.Action, info.Body)
	}
	msgs, _ := c.recvData("ff", 1)
	if msgs[0] != "kept" {
		t.Fatalf("first data %v, want the stored message", msgs)
	}
	pub.expectOK("rtm/publish", 2, map[string]any{"channel": "ff", "message": "next"})
	if msgs, _ := c.recvData("ff", 1); msgs[0] != "next" {
		t.Fatalf("then %v, want the next message", msgs)
	}
	if st := e.srv.Stats(); st.FastForward != 1 || st.Subscriptions != 1 {
		t.Fatalf("fast forwards %d, subscriptions %d; want 1, 1", st.FastForward, st.Subscriptions)
	}
}

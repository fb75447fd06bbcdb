package server_test

import (
	"encoding/json"
	"testing"
	"time"
)

// TestStatsMove checks that the counters metrics and $sys.stats are built
// on move with the traffic that should move them.
func TestStatsMove(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "s"})
	pub := e.dial(t, "test", "")
	for i := 0; i < 3; i++ {
		pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "s", "message": i})
	}
	sub.recvData("s", 3)
	pub.expectError("auth/authenticate", 9, authBody("x"), "authentication_failed")

	st := e.srv.Stats()
	if st.Connections != 2 || st.ConnectionsTotal != 2 || st.Subscriptions != 1 {
		t.Errorf("connections %d, total %d, subscriptions %d; want 2, 2, 1", st.Connections, st.ConnectionsTotal, st.Subscriptions)
	}
	if st.MessagesIn[0] != 3 || st.MessagesOut[0] != 3 || st.BytesIn[0] == 0 || st.BytesOut[0] == 0 {
		t.Errorf("json in %d (%d B), out %d (%d B); want 3 messages each way",
			st.MessagesIn[0], st.BytesIn[0], st.MessagesOut[0], st.BytesOut[0])
	}
	if st.AuthFailures != 1 {
		t.Errorf("auth failures %d, want 1", st.AuthFailures)
	}
	sub.expectOK("rtm/unsubscribe", 2, map[string]any{"subscription_id": "s"})
	if n := e.srv.Stats().Subscriptions; n != 0 {
		t.Errorf("subscriptions after unsubscribe: %d", n)
	}
}

// TestServerPublish checks the edge's own publishing (as for $sys.stats):
// it reaches subscribers like any message, in every codec.
func TestServerPublish(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	nonce := c.handshake(1, "admin")
	c.expectOK("auth/authenticate", 2, authBody(roleHash(adminSecret, nonce)))
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "$sys.stats"})
	if _, err := e.srv.Publish("test", "$sys.stats", map[string]any{"connections": int64(1), "at": time.Unix(0, 0).UTC().Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := c.recvData("$sys.stats", 1)
	m := msgs[0].(map[string]any)
	if m["connections"] != json.Number("1") || m["at"] != "1970-01-01T00:00:00Z" {
		t.Fatalf("got %v", m)
	}
	if _, err := e.srv.Publish("nope", "x", 1); err == nil {
		t.Fatal("publish to an unknown app succeeded")
	}
}

package server_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/edge/server"
)

// recvByChannel reads data PDUs of subscription sub until want (messages
// by channel) has arrived, failing on anything else; every PDU must name
// its channel.
func (c *rawClient) recvByChannel(t *testing.T, sub string, want map[string][]any) {
	t.Helper()
	got := map[string][]any{}
	n := 0
	for _, ms := range want {
		n += len(ms)
	}
	for k := 0; k < n; {
		p := c.recv()
		ch, _ := p.Body["channel"].(string)
		if p.Action != "rtm/subscription/data" || p.Body["subscription_id"] != sub || ch == "" {
			t.Fatalf("waiting for %v: got %s %v", want, p.Action, p.Body)
		}
		ms := p.Body["messages"].([]any)
		got[ch] = append(got[ch], ms...)
		k += len(ms)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestPrefixSubscription: prefix: true delivers every channel whose name
// starts with channel (the one named, those that exist, those made
// later), each data PDU naming its channel; nothing of other channels;
// nothing after unsubscribe.
func TestPrefixSubscription(t *testing.T) {
	t.Parallel()
	eachEdge(t, func(t *testing.T, e *edge) { testPrefixSubscription(t, e, e) })
}

// testPrefixSubscription publishes on edge pe and subscribes on se (on
// a cluster, two edges).
func testPrefixSubscription(t *testing.T, pe, se *edge) {
	pub := pe.dial(t, "test", "")
	sub := se.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "news.a", "message": "old"})
	ok := sub.raw(`{"action":"rtm/subscribe","id":1,"body":{"channel":"news.","prefix":true,"subscription_id":"n","history":{"count":1}}}`, 1)
	if ok.Action != "rtm/subscribe/ok" || ok.Body["subscription_id"] != "n" {
		t.Fatalf("prefix subscribe: %s %v", ok.Action, ok.Body)
	}
	sub.recvByChannel(t, "n", map[string][]any{"news.a": {"old"}}) // history of an existing channel
	for i, m := range []map[string]any{
		{"channel": "news.a", "message": 1},
		{"channel": "news.b", "message": 2}, // made after the subscribe
		{"channel": "news.", "message": 3},  // the prefix itself is a channel too
		{"channel": "newsroom", "message": "no"},
		{"channel": "other", "message": "no"},
		{"channel": "news.b", "message": 4},
	} {
		pub.expectOK("rtm/publish", 10+i, m)
	}
	sub.recvByChannel(t, "n", map[string][]any{"news.a": {json.Number("1")}, "news.b": {json.Number("2"), json.Number("4")},
		"news.": {json.Number("3")}})
	un := sub.raw(`{"action":"rtm/unsubscribe","id":2,"body":{"subscription_id":"n"}}`, 2)
	if un.Action != "rtm/unsubscribe/ok" {
		t.Fatalf("unsubscribe: %s %v", un.Action, un.Body)
	}
	sub.expectOK("rtm/subscribe", 3, map[string]any{"channel": "ctl"})
	pub.expectOK("rtm/publish", 20, map[string]any{"channel": "news.c", "message": "late"})
	pub.expectOK("rtm/publish", 21, map[string]any{"channel": "news.a", "message": "late"})
	pub.expectOK("rtm/publish", 22, map[string]any{"channel": "ctl", "message": "end"})
	if msgs, _ := sub.recvData("ctl", 1); msgs[0] != "end" {
		t.Fatalf("after unsubscribe: %v", msgs)
	}
}

// TestPrefixRefusals: a prefix subscription is granted by pattern, takes
// no position or filter, and the connection stays usable.
func TestPrefixRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	denied := map[string]any{"error": "authorization_denied", "reason": "Unauthorized"}
	// "*" never covers the reserved channels.
	wantBody(t, c.raw(`{"action":"rtm/subscribe","id":1,"body":{"channel":"$sys","prefix":true}}`, 1), "rtm/subscribe/error", denied)
	for i, frame := range []string{
		`{"action":"rtm/subscribe","id":2,"body":{"channel":"a","prefix":true,"position":"1:1"}}`,
		`{"action":"rtm/subscribe","id":3,"body":{"channel":"a","prefix":true,"subscription_id":"v","filter":"SELECT * FROM a"}}`,
		`{"action":"rtm/subscribe","id":4,"body":{"channel":"a","prefix":"yes"}}`,
	} {
		if p := c.raw(frame, i+2); p.Body["error"] != "invalid_format" {
			t.Fatalf("%s: got %s %v, want invalid_format", frame, p.Action, p.Body)
		}
	}
	// The reader role may subscribe to news* : news.x is covered, ne is not.
	r := e.dial(t, "test", "")
	nonce := r.handshake(1, "reader")
	r.expectOK("auth/authenticate", 2, authBody(roleHash("reader-secret", nonce)))
	r.expectOK("rtm/subscribe", 3, map[string]any{"channel": "news.x", "prefix": true})
	wantBody(t, r.raw(`{"action":"rtm/subscribe","id":4,"body":{"channel":"ne","prefix":true}}`, 4), "rtm/subscribe/error", denied)
	c.expectOK("rtm/publish", 9, map[string]any{"channel": "a", "message": "still usable"})
}

// TestPrefixBounded: a prefix subscription covers at most
// limits.prefix_channels channels: the one past them ends it with an
// rtm/subscription/error subscription_quota_exceeded, and a new one over
// that many channels is refused.
func TestPrefixBounded(t *testing.T) {
	t.Parallel()
	const bound = 64
	e := startEdge(t, func(o *server.Options) { o.Limits.PrefixChannels = bound })
	pub := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "f.", "prefix": true, "subscription_id": "f"})
	pub.pipeline("rtm/publish", bound+1, func(i int) map[string]any {
		return map[string]any{"channel": "f." + itoa(i), "message": i}
	})
	for got := 0; ; {
		p := sub.recv()
		if p.Action == "rtm/subscription/error" {
			if p.Body["error"] != "subscription_quota_exceeded" || p.Body["subscription_id"] != "f" {
				t.Fatalf("got %v, want subscription_quota_exceeded for f", p.Body)
			}
			if got > bound {
				t.Fatalf("%d messages before the end, from at most %d channels", got, bound)
			}
			break
		}
		if p.Action != "rtm/subscription/data" {
			t.Fatalf("got %s %v", p.Action, p.Body)
		}
		got += len(p.Body["messages"].([]any))
	}
	p := sub.raw(`{"action":"rtm/subscribe","id":2,"body":{"channel":"f.","prefix":true,"subscription_id":"f"}}`, 2)
	if p.Body["error"] != "subscription_quota_exceeded" {
		t.Fatalf("a prefix over %d channels: %s %v, want subscription_quota_exceeded", bound+1, p.Action, p.Body)
	}
	sub.expectOK("rtm/subscribe", 3, map[string]any{"channel": "f.1", "prefix": true, "subscription_id": "f1"})
}

package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIDEcho checks that a reply carries the request's id with its type and
// value, and that a request without id gets no reply at all.
func TestIDEcho(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")

	c.sendText(`{"action":"rtm/publish","id":7,"body":{"channel":"a","message":1}}`)
	if p := c.recv(); p.ID != json.Number("7") || p.Action != "rtm/publish/ok" {
		t.Fatalf("integer id: got %+v", p)
	}
	c.sendText(`{"action":"rtm/publish","id":"7","body":{"channel":"a","message":2}}`)
	if p := c.recv(); p.ID != "7" {
		t.Fatalf("string id: got %#v, want the string \"7\"", p.ID)
	}
	// No id: no reply, not even for an error. The next reply is for id 9.
	c.sendText(`{"action":"rtm/publish","body":{"channel":"a","message":3}}`)
	c.sendText(`{"action":"rtm/publish","body":{"channel":""}}`)
	c.sendText(`{"action":"rtm/nonsense","body":{}}`)
	c.sendText(`{"action":"rtm/read","id":9,"body":{"channel":"a"}}`)
	if p := c.recv(); p.ID != json.Number("9") || p.Body["message"] != json.Number("3") {
		t.Fatalf("after requests without id, got %+v; want only the reply to id 9", p)
	}
}

func TestPublishReadPositions(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	p1 := c.expectOK("rtm/publish", 1, map[string]any{"channel": "ch", "message": "one"})["position"].(string)
	p2 := c.expectOK("rtm/write", 2, map[string]any{"channel": "ch", "message": "two"})["position"].(string)
	if p1 == p2 || !strings.Contains(p1, ":") {
		t.Fatalf("positions %q and %q", p1, p2)
	}
	latest := c.expectOK("rtm/read", 3, map[string]any{"channel": "ch"})
	if latest["message"] != "two" || latest["position"] != p2 {
		t.Fatalf("read latest: %v, want two at %s", latest, p2)
	}
	first := c.expectOK("rtm/read", 4, map[string]any{"channel": "ch", "position": p1})
	if first["message"] != "one" || first["position"] != p1 {
		t.Fatalf("read at %s: %v", p1, first)
	}
	empty := c.expectOK("rtm/read", 5, map[string]any{"channel": "never-used"})
	if v, ok := empty["message"]; !ok || v != nil {
		t.Fatalf("read of an empty channel: %v, want message null", empty)
	}
	c.expectError("rtm/read", 6, map[string]any{"channel": "ch", "position": "nonsense"}, "invalid_format")
}

func TestDeleteThenReadGivesNull(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/write", 1, map[string]any{"channel": "kv", "message": map[string]any{"v": 1}})
	c.expectOK("rtm/delete", 2, map[string]any{"channel": "kv"})
	body := c.expectOK("rtm/read", 3, map[string]any{"channel": "kv"})
	if v, ok := body["message"]; !ok || v != nil {
		t.Fatalf("read after delete: %v, want null", body)
	}
}

func TestSubscribeDataAndResume(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")

	ok := sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "feed"})
	if ok["subscription_id"] != "feed" || ok["position"] == "" {
		t.Fatalf("subscribe/ok: %v", ok)
	}
	var positions []string
	for i := 0; i < 5; i++ {
		positions = append(positions, pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "feed", "message": i})["position"].(string))
	}
	if ok["position"] != positions[0] {
		t.Fatalf("subscribe/ok.position %v, want the first message's %s", ok["position"], positions[0])
	}
	msgs, after := sub.recvData("feed", 5)
	for i, m := range msgs {
		if m != json.Number(fmt.Sprint(i)) {
			t.Fatalf("message %d = %v", i, m)
		}
	}
	un := sub.expectOK("rtm/unsubscribe", 2, map[string]any{"subscription_id": "feed"})
	if un["position"] != after {
		t.Fatalf("unsubscribe/ok.position %v, want %s", un["position"], after)
	}
	for i := 5; i < 8; i++ {
		pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "feed", "message": i})
	}
	// Resuming at data.position continues with no gap and no duplicate.
	sub.expectOK("rtm/subscribe", 3, map[string]any{"channel": "feed", "position": after})
	msgs, _ = sub.recvData("feed", 3)
	for i, m := range msgs {
		if m != json.Number(fmt.Sprint(i+5)) {
			t.Fatalf("resumed message %d = %v, want %d", i, m, i+5)
		}
	}
	// Subscribing at a position is inclusive.
	sub.expectOK("rtm/subscribe", 4, map[string]any{"channel": "feed", "subscription_id": "again", "position": positions[2]})
	msgs, _ = sub.recvData("again", 6)
	if msgs[0] != json.Number("2") {
		t.Fatalf("subscribe at %s started with %v, want 2", positions[2], msgs[0])
	}
}

func TestSubscribeHistory(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	for i := 0; i < 10; i++ {
		c.expectOK("rtm/publish", i+1, map[string]any{"channel": "h", "message": i})
	}
	c.expectOK("rtm/subscribe", 20, map[string]any{"channel": "h", "history": map[string]any{"count": 3}})
	msgs, _ := c.recvData("h", 3)
	if msgs[0] != json.Number("7") || msgs[2] != json.Number("9") {
		t.Fatalf("history count 3: %v", msgs)
	}
}

func TestSubscriptionErrors(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "x"})
	c.expectError("rtm/subscribe", 2, map[string]any{"channel": "x"}, "already_subscribed")
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "x", "force": true})
	c.expectOK("rtm/subscribe", 4, map[string]any{"channel": "x", "subscription_id": "x2"})
	c.expectError("rtm/unsubscribe", 5, map[string]any{"subscription_id": "nope"}, "not_subscribed")
	c.expectError("rtm/subscribe", 6, map[string]any{"channel": "x", "subscription_id": "v",
		"filter": "SELECT * FROM y"}, "invalid_filter") // not the FROM channel
	c.expectError("rtm/subscribe", 7, map[string]any{"channel": "x", "subscription_id": "p", "position": "1:"}, "invalid_format")
	c.expectError("rtm/subscribe", 8, map[string]any{"channel": "x", "subscription_id": "e", "position": "1:1"}, "expired_position")
}

func TestMalformedFramesKeepConnection(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	tests := []struct {
		name, frame, code string
	}{
		{"not json", `{"action":`, "json_parse_error"},
		{"garbage", "\x00\x01garbage", "json_parse_error"},
		{"not an object", `[1,2,3]`, "invalid_format"},
		{"no action", `{"id":1,"body":{}}`, "invalid_format"},
	}
	for _, tt := range tests {
		c.sendText(tt.frame)
		p := c.recv()
		if p.Action != "/error" || p.Body["error"] != tt.code || p.Body["reason"] == "" {
			t.Fatalf("%s: got %s %v, want /error %s", tt.name, p.Action, p.Body, tt.code)
		}
	}
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "still", "message": "usable"})
	c.expectError("rtm/publish", 2, map[string]any{"channel": 5}, "invalid_format")
	c.expectError("nope/x", 3, map[string]any{}, "invalid_service")
	c.expectError("rtm/x", 4, map[string]any{}, "invalid_operation")
}

func TestChannelRules(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "$heartbeat", "message": nil})
	c.expectError("rtm/publish", 2, map[string]any{"channel": "$sys.stats", "message": 1}, "authorization_denied")
	c.expectError("rtm/subscribe", 3, map[string]any{"channel": "$sys.stats"}, "authorization_denied")
	c.expectError("rtm/read", 4, map[string]any{"channel": "$secret"}, "authorization_denied")
	c.expectError("rtm/publish", 5, map[string]any{"channel": "", "message": 1}, "invalid_format")
	c.expectError("rtm/publish", 6, map[string]any{"channel": strings.Repeat("a", 257), "message": 1}, "invalid_format")
	c.expectError("rtm/publish", 7, map[string]any{"channel": "bad\nname", "message": 1}, "invalid_format")
	c.expectOK("rtm/publish", 8, map[string]any{"channel": strings.Repeat("é", 128), "message": 1})
	// A denied publish stores nothing.
	body := c.expectOK("rtm/read", 9, map[string]any{"channel": "Case"})
	if body["message"] != nil {
		t.Fatalf("unexpected message %v", body)
	}
}

func TestInvalidAppkeyRefusedBeforeUpgrade(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	for _, q := range []string{"?appkey=wrong", ""} {
		resp, err := http.Get(e.http.URL + "/v2" + q)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var b map[string]string
		if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal(body, &b) != nil || b["error"] != "invalid_appkey" {
			t.Fatalf("appkey %q: %d %s", q, resp.StatusCode, body)
		}
	}
}

// TestLatestValuePastTTL checks the key-value use: the newest message stays
// readable past the ttl (history count 1 for 6 h), older ones expire.
func TestLatestValuePastTTL(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	first := c.expectOK("rtm/write", 1, map[string]any{"channel": "kv", "message": "old"})["position"].(string)
	// Fill a block so the old value sits in a block of its own past the ttl.
	big := strings.Repeat("x", 40<<10)
	c.expectOK("rtm/write", 2, map[string]any{"channel": "kv", "message": big})
	c.expectOK("rtm/write", 3, map[string]any{"channel": "kv", "message": big})
	c.expectOK("rtm/write", 4, map[string]any{"channel": "kv", "message": "new"})
	e.clock.Advance(10 * time.Minute)
	e.srv.Store().Sweep()
	e.clock.Advance(time.Minute)
	e.srv.Store().Sweep()
	body := c.expectOK("rtm/read", 5, map[string]any{"channel": "kv"})
	if body["message"] != "new" {
		t.Fatalf("latest value past ttl: %v", body)
	}
	c.expectError("rtm/read", 6, map[string]any{"channel": "kv", "position": first}, "expired_position")
	c.expectError("rtm/subscribe", 7, map[string]any{"channel": "kv", "position": first}, "expired_position")
	e.clock.Advance(7 * time.Hour)
	e.srv.Store().Sweep()
	e.clock.Advance(time.Minute)
	e.srv.Store().Sweep()
	body = c.expectOK("rtm/read", 8, map[string]any{"channel": "kv"})
	if body["message"] != nil {
		t.Fatalf("latest value past history age: %v, want null", body)
	}
}

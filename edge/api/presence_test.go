package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/auth"
)

// member opens a connection to app alpha as user (anonymous when ""),
// with info, and subscribes it to channel.
func (e *edge) member(t *testing.T, user, info, channel string) *subscriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/v2?appkey=alpha", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	s := &subscriber{t: t, ws: ws}
	send := func(frame string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	if user != "" {
		var raw json.RawMessage
		if info != "" {
			raw = json.RawMessage(info)
		}
		tok, err := auth.Mint([]byte(alphaJWT), auth.Claims{Role: "default", Subject: user, Info: raw, Expires: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		send(`{"action":"auth/authenticate","id":1,"body":{"method":"jwt","credentials":{"token":"` + tok + `"}}}`)
		if p := s.next(); p.Action != "auth/authenticate/ok" {
			t.Fatalf("authenticate: %+v", p)
		}
	}
	send(`{"action":"rtm/subscribe","id":2,"body":{"channel":` + quoteJSON(channel) + `}}`)
	if p := s.next(); p.Action != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %+v", p)
	}
	return s
}

// TestPresence: a channel's members in user id order, paged, one per user
// with its connections counted, anonymous connections counted but not
// listed, and never another app's.
func TestPresence(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	e.member(t, "bob", `{"name":"Bob"}`, "room")
	e.member(t, "ann", `"Ann"`, "room")
	e.member(t, "ann", `"Ann"`, "room")
	e.member(t, "", "", "room")
	e.member(t, "cat", "", "elsewhere")
	got := e.ok(t, "presence", alphaKey, `{"channel":"room"}`)
	want := `{"connections":4,"members":[{"connections":2,"info":"Ann","user_id":"ann"},{"connections":1,"info":{"name":"Bob"},"user_id":"bob"}],"users":2}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Fatalf("presence: %s\nwant %s", b, want)
	}
	page := e.ok(t, "presence", alphaKey, `{"channel":"room","limit":1}`)
	if b, _ := json.Marshal(page); !strings.Contains(string(b), `"next":"ann"`) || !strings.Contains(string(b), `"user_id":"ann"`) || strings.Contains(string(b), "bob") {
		t.Fatalf("first page of 1: %s", b)
	}
	page = e.ok(t, "presence", alphaKey, `{"channel":"room","limit":1,"after":"ann"}`)
	if b, _ := json.Marshal(page); !strings.Contains(string(b), `"user_id":"bob"`) || strings.Contains(string(b), "next") {
		t.Fatalf("second page of 1: %s", b)
	}
	stats := e.ok(t, "presence_stats", alphaKey, `{"channel":"room"}`)
	if b, _ := json.Marshal(stats); string(b) != `{"connections":4,"users":2}` {
		t.Fatalf("presence_stats: %v", stats)
	}
	empty := e.ok(t, "presence", betaKey, `{"channel":"room"}`)
	if b, _ := json.Marshal(empty); string(b) != `{"connections":0,"members":[],"users":0}` {
		t.Fatalf("another app's room: %s", b)
	}
}

func TestPresenceRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	tests := []struct {
		name, method, body string
		status             int
		code               string
	}{
		{name: "no channel", method: "presence", body: `{}`, status: 400, code: "invalid_format"},
		{name: "stats without channel", method: "presence_stats", body: `{}`, status: 400, code: "invalid_format"},
		{name: "limit too large", method: "presence", body: `{"channel":"room","limit":1001}`, status: 400, code: "invalid_format"},
		{name: "negative limit", method: "presence", body: `{"channel":"room","limit":-1}`, status: 400, code: "invalid_format"},
		{name: "after too long", method: "presence", body: `{"channel":"room","after":"` + strings.Repeat("a", 257) + `"}`, status: 400, code: "invalid_format"},
		{name: "unknown field", method: "presence_stats", body: `{"channel":"room","members":true}`, status: 400, code: "invalid_format"},
		{name: "not json", method: "presence", body: `{"channel":`, status: 400, code: "json_parse_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e.call(t, tt.method, alphaKey, tt.body).refused(t, tt.status, tt.code)
		})
	}
	e.call(t, "presence_stats", "", `{"channel":"room"}`).refused(t, 401, "authentication_failed")
}

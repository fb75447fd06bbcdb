package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestChannels: the app's live channels by prefix, in order, paged, never
// another app's.
func TestChannels(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	for _, ch := range []string{"room.b", "room.a", "lobby", "room.c", "room.d"} {
		e.ok(t, "publish", alphaKey, `{"channel":"`+ch+`","message":1}`)
	}
	e.ok(t, "publish", betaKey, `{"channel":"room.beta","message":1}`)
	e.subscribe(t, "alpha", "room.e") // a subscriber makes a channel live too
	list := func(body string) (names []string, pages int) {
		for {
			var page struct {
				Channels []string `json:"channels"`
				Next     string   `json:"next"`
			}
			a := e.call(t, "channels", alphaKey, body)
			if a.status != 200 || json.Unmarshal([]byte(a.raw), &page) != nil || page.Channels == nil {
				t.Fatalf("channels %s: %d %s", body, a.status, a.raw)
			}
			names, pages = append(names, page.Channels...), pages+1
			if page.Next == "" {
				return names, pages
			}
			var req map[string]any
			_ = json.Unmarshal([]byte(body), &req)
			req["after"] = page.Next
			b, _ := json.Marshal(req)
			body = string(b)
		}
	}
	tests := []struct {
		name, body string
		want       string
		pages      int
	}{
		{name: "all", body: `{}`, want: "lobby,room.a,room.b,room.c,room.d,room.e", pages: 1},
		{name: "prefix", body: `{"prefix":"room."}`, want: "room.a,room.b,room.c,room.d,room.e", pages: 1},
		{name: "prefix by 2", body: `{"prefix":"room.","limit":2}`, want: "room.a,room.b,room.c,room.d,room.e", pages: 3},
		{name: "after", body: `{"prefix":"room.","after":"room.c"}`, want: "room.d,room.e", pages: 1},
		{name: "none", body: `{"prefix":"nope"}`, want: "", pages: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, pages := list(tt.body)
			if strings.Join(got, ",") != tt.want || pages != tt.pages {
				t.Fatalf("channels %s = %v in %d pages, want %s in %d", tt.body, got, pages, tt.want, tt.pages)
			}
		})
	}
	e.call(t, "channels", alphaKey, `{"limit":1001}`).refused(t, 400, "invalid_format")
}

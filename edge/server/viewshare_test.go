package server_test

import (
	"fmt"
	"testing"
)

// TestViewSharedBySubscribers: subscriptions of one statement share its
// results (edge/filter's share.go), and each still gets exactly what the view makes
// of the channel: live, after a subscription of it ended, and from history
// by one that comes later (whose writer finds some results made and makes
// the others).
func TestViewSharedBySubscribers(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	const stmt = "SELECT who, speed * 2 AS double FROM zoo WHERE speed > 1"
	subs := make([]*rawClient, 3)
	for i := range subs {
		subs[i] = e.dial(t, "test", "")
		subs[i].expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "v", "filter": stmt})
	}
	all := e.dial(t, "test", "")
	all.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "all", "filter": "SELECT * FROM zoo WHERE speed > 1"})
	pub := e.dial(t, "test", "")
	speeds := []int{5, 1, 40, 2}
	for i, sp := range speeds {
		pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "zoo", "message": map[string]any{"who": fmt.Sprint("a", i), "speed": sp}})
	}
	want := "[map[double:10 who:a0] map[double:80 who:a2] map[double:4 who:a3]]"
	for i, c := range subs {
		if got, _ := c.recvData("v", 3); fmt.Sprint(got) != want {
			t.Fatalf("subscriber %d got %v, want %s", i, got, want)
		}
	}
	if got, _ := all.recvData("all", 3); fmt.Sprint(got) != "[map[speed:5 who:a0] map[speed:40 who:a2] map[speed:2 who:a3]]" {
		t.Fatalf("SELECT * subscriber got %v", got)
	}
	subs[0].expectOK("rtm/unsubscribe", 2, map[string]any{"subscription_id": "v"})
	pub.expectOK("rtm/publish", 10, map[string]any{"channel": "zoo", "message": map[string]any{"who": "b", "speed": 3}})
	for i, c := range subs[1:] {
		if got, _ := c.recvData("v", 1); fmt.Sprint(got) != "[map[double:6 who:b]]" {
			t.Fatalf("subscriber %d after another left got %v", i+1, got)
		}
	}
	late := e.dial(t, "test", "")
	late.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "v", "filter": stmt, "history": map[string]any{"count": 5}})
	if got, _ := late.recvData("v", 4); fmt.Sprint(got) != "[map[double:10 who:a0] map[double:80 who:a2] map[double:4 who:a3] map[double:6 who:b]]" {
		t.Fatalf("a later subscriber's history through the shared view: %v", got)
	}
}

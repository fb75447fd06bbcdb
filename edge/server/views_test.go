package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestViewFiltersAndProjects: a subscription with a filter gets what the
// view makes of the channel's messages, live and from history, in raw
// JSON frames as an RTM SDK speaks: WHERE drops, the select list
// projects (a missing field is null), SELECT * keeps the message whole,
// and the data position stays the channel's.
func TestViewFiltersAndProjects(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dial(t, "test", "")
	animals := []map[string]any{
		{"who": "zebra", "speed": 40, "pos": map[string]any{"lat": 1.5}},
		{"who": "snail", "speed": 0.01},
		{"who": "zebra", "speed": 5},
	}
	for i, a := range animals {
		pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "zoo", "message": a})
	}
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "fast",
		"filter": "SELECT * FROM `zoo` WHERE who = 'zebra' AND speed > 10", "history": map[string]any{"count": 3}})
	got, pos := c.recvData("fast", 1)
	if m := got[0].(map[string]any); m["who"] != "zebra" || m["speed"].(json.Number).String() != "40" {
		t.Fatalf("history through the view: %v", got)
	}
	c.expectOK("rtm/subscribe", 2, map[string]any{"subscription_id": "names", "channel": "zoo",
		"filter": "select who, speed * 2 as double, pos.lat from zoo where speed < 10"})
	pub.expectOK("rtm/publish", 10, map[string]any{"channel": "zoo", "message": map[string]any{"who": "slug", "speed": 1}})
	pub.expectOK("rtm/publish", 11, map[string]any{"channel": "zoo", "message": map[string]any{"who": "zebra", "speed": 60}})
	pub.expectOK("rtm/publish", 12, map[string]any{"channel": "zoo", "message": "not a map"})
	var fast, names []any
	var fastPos string
	for len(fast) < 1 || len(names) < 1 {
		p := c.recv()
		if p.Action != "rtm/subscription/data" {
			t.Fatalf("got %s %v", p.Action, p.Body)
		}
		switch p.Body["subscription_id"] {
		case "fast":
			fast = append(fast, p.Body["messages"].([]any)...)
			fastPos = p.Body["position"].(string)
		case "names":
			names = append(names, p.Body["messages"].([]any)...)
		}
	}
	if m := fast[0].(map[string]any); m["speed"].(json.Number).String() != "60" || len(fast) != 1 {
		t.Fatalf("live through the view: %v", fast)
	}
	if fastPos == pos {
		t.Fatalf("the data position did not move on: %s", fastPos)
	}
	want := `{"double":2,"lat":null,"who":"slug"}`
	if b, _ := json.Marshal(names[0]); string(b) != want || len(names) != 1 {
		t.Fatalf("projection = %s (of %d), want %s", b, len(names), want)
	}
	// The string message is no map: both views dropped it. A last
	// publish shows nothing else was queued.
	pub.expectOK("rtm/publish", 13, map[string]any{"channel": "zoo", "message": map[string]any{"who": "zebra", "speed": 99}})
	if got, _ := c.recvData("fast", 1); got[0].(map[string]any)["speed"].(json.Number).String() != "99" {
		t.Fatalf("after the dropped message: %v", got)
	}
}

// TestViewRefusals: what a view cannot be is an error reply naming why,
// and the connection goes on.
func TestViewRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	tests := []struct {
		name   string
		body   map[string]any
		code   string
		reason string
	}{
		{"bad statement", map[string]any{"subscription_id": "v", "filter": "SELECT * FROM zoo WHERE"}, "invalid_filter", "column 24"},
		{"not the FROM channel", map[string]any{"subscription_id": "v", "channel": "farm", "filter": "SELECT * FROM zoo"}, "invalid_filter", `"zoo"`},
		{"no subscription id", map[string]any{"filter": "SELECT * FROM zoo"}, "invalid_format", "subscription_id"},
		{"negative period", map[string]any{"subscription_id": "v", "filter": "SELECT COUNT(*) FROM zoo", "period": -1}, "invalid_format", "period"},
		{"period past 60", map[string]any{"subscription_id": "v", "filter": "SELECT * FROM zoo", "period": 61}, "invalid_format", "period"},
		{"period without a filter", map[string]any{"channel": "zoo", "period": 5}, "invalid_format", "period"},
	}
	for i, tt := range tests {
		body := c.expectError("rtm/subscribe", i+1, tt.body, tt.code)
		if r := body["reason"].(string); !strings.Contains(r, tt.reason) {
			t.Errorf("%s: reason %q does not say %q", tt.name, r, tt.reason)
		}
	}
	c.expectOK("rtm/subscribe", 100, map[string]any{"subscription_id": "v", "filter": "SELECT * FROM zoo"})
}

// TestAggregateView: an aggregate view sends one message per group at the
// end of each period (1 s by default), as one data PDU. However the
// publishes fall across periods, the counts over the PDUs add up to what
// was published, and a period without input sends nothing: the PDU after
// the totals carries only the next message's group.
func TestAggregateView(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "stats",
		"filter": "SELECT who, COUNT(*) AS n, MAX(speed) AS top FROM zoo GROUP BY who"})
	pub := e.dial(t, "test", "")
	for i, a := range []map[string]any{
		{"who": "zebra", "speed": 40}, {"who": "snail", "speed": 1}, {"who": "zebra", "speed": 55},
		{"who": "zebra", "speed": 12}, {"who": "snail", "speed": 2},
	} {
		pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "zoo", "message": a})
	}
	counts := map[string]int{}
	for counts["zebra"] < 3 || counts["snail"] < 2 {
		p := c.recvWithin(10 * time.Second)
		if p.Action != "rtm/subscription/data" || p.Body["subscription_id"] != "stats" {
			t.Fatalf("got %s %v", p.Action, p.Body)
		}
		msgs := p.Body["messages"].([]any)
		if len(msgs) == 0 {
			t.Fatalf("an aggregate PDU without results: %v", p.Body)
		}
		for _, m := range msgs {
			row := m.(map[string]any)
			n, _ := row["n"].(json.Number).Int64()
			counts[row["who"].(string)] += int(n)
			if _, ok := row["top"].(json.Number); !ok {
				t.Fatalf("MAX(speed) of %v is not a number", row)
			}
		}
	}
	if counts["zebra"] != 3 || counts["snail"] != 2 {
		t.Fatalf("counts over the periods: %v", counts)
	}
	pub.expectOK("rtm/publish", 10, map[string]any{"channel": "zoo", "message": map[string]any{"who": "slug", "speed": 0}})
	p := c.recvWithin(10 * time.Second)
	msgs, _ := p.Body["messages"].([]any)
	if p.Action != "rtm/subscription/data" || len(msgs) != 1 || msgs[0].(map[string]any)["who"] != "slug" {
		t.Fatalf("after the totals: %s %v, want only the slug's group (empty periods send nothing)", p.Action, p.Body)
	}
	c.expectOK("rtm/unsubscribe", 11, map[string]any{"subscription_id": "stats"})
}

package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAggregateUnsubscribeMidPeriod: unsubscribing from an aggregate view
// while a period is counting answers the position of the period's first
// message, not the one past what was counted: nothing of the period was
// sent, and a subscription resumed there counts it all again.
func TestAggregateUnsubscribeMidPeriod(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dial(t, "test", "")
	var first string
	for i := range 3 {
		p := pub.expectOK("rtm/publish", i+1, map[string]any{"channel": "agg", "message": map[string]any{"k": "a"}})["position"].(string)
		if i == 0 {
			first = p
		}
	}
	c := e.dial(t, "test", "")
	filter := "SELECT COUNT(*) AS n FROM agg"
	c.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "v", "filter": filter, "period": 60, "history": map[string]any{"count": 3}})
	end := c.expectOK("rtm/unsubscribe", 2, map[string]any{"subscription_id": "v"})["position"]
	if end != first {
		t.Fatalf("unsubscribe mid-period answered %v, want %s: the period's first message, none of it sent", end, first)
	}
	c.expectOK("rtm/subscribe", 3, map[string]any{"subscription_id": "v", "filter": filter, "position": first})
	p := c.recvWithin(10 * time.Second)
	msgs, _ := p.Body["messages"].([]any)
	if p.Action != "rtm/subscription/data" || len(msgs) != 1 || msgs[0].(map[string]any)["n"] != json.Number("3") {
		t.Fatalf("resumed at %s: %s %v, want one result counting the 3 messages", first, p.Action, p.Body)
	}
}

// TestAggregatePeriodSplit: a period whose results pass 64 KiB leaves as
// several data PDUs, each of at most 64 KiB of messages, all at the
// period's position, together every group once.
func TestAggregatePeriodSplit(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dial(t, "test", "")
	const groups = 100
	pad := strings.Repeat("g", 1000)
	for i := range groups {
		pub.send("rtm/publish", nil, map[string]any{"channel": "wide", "message": map[string]any{"who": pad + itoa(i)}})
	}
	last := pub.expectOK("rtm/read", 1, map[string]any{"channel": "wide"})["position"].(string)
	c := e.dial(t, "test", "")
	// History counts into the first period: all 100 groups are in it.
	c.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "w", "filter": "SELECT who, COUNT(*) AS n FROM wide GROUP BY who",
		"history": map[string]any{"count": groups}})
	seen := map[string]bool{}
	pdus := 0
	for len(seen) < groups {
		p := c.recvWithin(10 * time.Second)
		if p.Action != "rtm/subscription/data" {
			t.Fatalf("got %s %v", p.Action, p.Body)
		}
		pdus++
		msgs := p.Body["messages"].([]any)
		if b, _ := json.Marshal(msgs); len(b) > 64<<10 {
			t.Fatalf("a PDU of %d bytes of messages, past 64 KiB", len(b))
		}
		if want := strings.Split(last, ":")[0] + ":" + next(t, last); p.Body["position"] != want {
			t.Fatalf("PDU at %v, want the period's %s", p.Body["position"], want)
		}
		for _, m := range msgs {
			who := m.(map[string]any)["who"].(string)
			if seen[who] {
				t.Fatalf("group %s twice", who[len(pad):])
			}
			seen[who] = true
		}
	}
	if pdus < 2 {
		t.Fatalf("%d groups of 1 KiB in %d PDU", groups, pdus)
	}
}

// next is the offset after position p's, as text.
func next(t *testing.T, p string) string {
	t.Helper()
	_, off, _ := strings.Cut(p, ":")
	n, err := json.Number(off).Int64()
	if err != nil {
		t.Fatalf("position %q: %v", p, err)
	}
	return itoa(int(n) + 1)
}

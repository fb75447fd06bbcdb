package server_test

import (
	"strings"
	"testing"
)

// abusive is a 60 KB message whose pattern p makes s LIKE p cost about a
// second of CPU without a budget: a run of _ too long for the
// bit-parallel search, tried at each start of s.
var abusive = map[string]any{"s": strings.Repeat("a", 30_000), "p": "%" + strings.Repeat("_", 29_000) + "b%"}

const likeFromMessage = "SELECT * FROM `ch` WHERE s LIKE p"

// TestViewBudgetEndsSubscription: a view given a message that costs more
// than its per-message budget ends with rtm/subscription/error
// invalid_filter at that message, after the data of the messages before
// it; the connection, its other subscriptions (a view, a channel) and a
// subscription of the same statement on another connection, which takes
// the verdict from the shared results, behave as a user expects.
func TestViewBudgetEndsSubscription(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "bad", "filter": likeFromMessage})
	c.expectOK("rtm/subscribe", 2, map[string]any{"subscription_id": "good", "filter": "SELECT * FROM `ch` WHERE s = 'ok'"})
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "other"})
	peer := e.dial(t, "test", "")
	peer.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "bad", "filter": likeFromMessage})
	pub := e.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "ch", "message": map[string]any{"s": "ab", "p": "a%"}})
	at := pub.expectOK("rtm/publish", 2, map[string]any{"channel": "ch", "message": abusive})["position"]
	pub.expectOK("rtm/publish", 3, map[string]any{"channel": "ch", "message": map[string]any{"s": "ok", "p": "o_"}})
	pub.expectOK("rtm/publish", 4, map[string]any{"channel": "other", "message": 1})

	for _, rc := range []*rawClient{c, peer} {
		if got, _ := rc.recvData("bad", 1); got[0].(map[string]any)["s"] != "ab" {
			t.Fatalf("the message before: %v", got)
		}
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		p := c.recv()
		id, _ := p.Body["subscription_id"].(string)
		switch {
		case id == "other":
			seen["other"] = p.Action == "rtm/subscription/data"
		case id == "good" && p.Action == "rtm/subscription/data":
			if msgs := p.Body["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["s"] != "ok" {
				t.Fatalf("good got %v", msgs)
			}
			seen["good"] = true
		case id == "bad" && !seen["bad"]:
			expectBudgetError(t, p, at)
			seen["bad"] = true
		default:
			t.Fatalf("got %s %v", p.Action, p.Body)
		}
	}
	expectBudgetError(t, peer.recv(), at)

	// The subscription is gone, and the connection goes on.
	c.expectError("rtm/unsubscribe", 4, map[string]any{"subscription_id": "bad"}, "not_subscribed")
	pub.expectOK("rtm/publish", 5, map[string]any{"channel": "ch", "message": map[string]any{"s": "ok", "p": "x"}})
	if got, _ := c.recvData("good", 1); len(got) != 1 {
		t.Fatalf("good after the error: %v", got)
	}
	c.expectOK("rtm/subscribe", 5, map[string]any{"subscription_id": "bad", "filter": "SELECT * FROM `ch` WHERE s LIKE 'o%'"})
	pub.expectOK("rtm/publish", 6, map[string]any{"channel": "ch", "message": map[string]any{"s": "ok", "p": "y"}})
	got := map[any]bool{}
	for range 2 {
		if p := c.recv(); p.Action == "rtm/subscription/data" {
			got[p.Body["subscription_id"]] = true
		}
	}
	if !got["bad"] || !got["good"] {
		t.Fatalf("after subscribing again, data came for %v, want bad and good", got)
	}
}

// TestViewBudgetAggregate: an aggregate view ends the same way, at the
// first message of the period it was counting.
func TestViewBudgetAggregate(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"subscription_id": "agg", "period": 60,
		"filter": "SELECT count(*) AS n FROM `ch` WHERE s LIKE p"})
	pub := e.dial(t, "test", "")
	first := pub.expectOK("rtm/publish", 1, map[string]any{"channel": "ch", "message": map[string]any{"s": "ab", "p": "a%"}})["position"]
	pub.expectOK("rtm/publish", 2, map[string]any{"channel": "ch", "message": abusive})
	expectBudgetError(t, c.recv(), first)
	c.expectError("rtm/unsubscribe", 2, map[string]any{"subscription_id": "agg"}, "not_subscribed")
}

// expectBudgetError fails unless p is the rtm/subscription/error of a
// view past its budget, at position at.
func expectBudgetError(t *testing.T, p pdu, at any) {
	t.Helper()
	reason, _ := p.Body["reason"].(string)
	if p.Action != "rtm/subscription/error" || p.Body["error"] != "invalid_filter" ||
		!strings.Contains(reason, "exceeded its per-message evaluation budget") || p.Body["position"] != at {
		t.Fatalf("got %s %v, want invalid_filter (budget) at %v", p.Action, p.Body, at)
	}
}

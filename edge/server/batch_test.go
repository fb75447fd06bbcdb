package server_test

import "testing"

// TestBatchOption subscribes to a history of five messages with the batch
// extension at 2: they come two by two, each data position just after its
// last message; a negative batch is refused.
func TestBatchOption(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	var pos []string
	for i := 1; i <= 5; i++ {
		pos = append(pos, c.expectOK("rtm/publish", i, map[string]any{"channel": "b", "message": i})["position"].(string))
	}
	c.expectOK("rtm/subscribe", 6, map[string]any{"channel": "b", "history": map[string]any{"count": 5}, "batch": 2})
	for _, want := range []struct {
		n    int
		next string
	}{{2, plus(t, pos[1], 1)}, {2, plus(t, pos[3], 1)}, {1, plus(t, pos[4], 1)}} {
		p := c.recv()
		if p.Action != "rtm/subscription/data" || len(p.Body["messages"].([]any)) != want.n || p.Body["position"] != want.next {
			t.Fatalf("got %s %v, want %d messages ending before %s", p.Action, p.Body, want.n, want.next)
		}
	}
	c.expectError("rtm/subscribe", 7, map[string]any{"channel": "b", "subscription_id": "neg", "batch": -1}, "invalid_format")
}

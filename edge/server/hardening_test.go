package server_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
)

// TestBadFramesAreRateLimited floods a connection with frames that do not
// decode: each gets its /error, but no faster than the request rate limit
// allows, and the connection then serves a valid request.
func TestBadFramesAreRateLimited(t *testing.T) {
	t.Parallel()
	const (
		rps   = 100 // also the burst
		flood = 150
	)
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond = rps })
	c := e.dial(t, "test", "")
	start := time.Now()
	for range flood {
		c.sendText("not json")
	}
	for i := range flood {
		p := c.recv()
		if p.Action != "/error" || p.Body["error"] != "json_parse_error" {
			t.Fatalf("reply %d: %s %v, want /error json_parse_error", i, p.Action, p.Body)
		}
	}
	// A full bucket holds rps tokens; the rest come at rps a second. Before
	// the fix all the replies came within milliseconds.
	elapsed := time.Since(start)
	if least := time.Duration(flood-rps) * time.Second / rps; elapsed < least*9/10 {
		t.Fatalf("%d error replies in %v; the limit of %d/s allows them no sooner than %v", flood, elapsed, rps, least)
	}
	deadline := time.Now().Add(5 * time.Second)
	for id := 1; ; id++ {
		p := c.request("rtm/publish", id, map[string]any{"channel": "a", "message": "after the flood"})
		if p.Action == "rtm/publish/ok" {
			break
		}
		if p.Body["error"] != "too_many_requests" || time.Now().After(deadline) {
			t.Fatalf("after the flood: %s %v, want ok within 5 s", p.Action, p.Body)
		}
		time.Sleep(20 * time.Millisecond) // pacing a retry loop, not waiting for an event
	}
}

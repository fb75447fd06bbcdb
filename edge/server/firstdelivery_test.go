package server_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
)

// latencies records what the server observes.
type latencies struct {
	mu   sync.Mutex
	secs []float64
}

func (l *latencies) Observe(v float64) {
	l.mu.Lock()
	l.secs = append(l.secs, v)
	l.mu.Unlock()
}

// wait returns the observations once there are n; then it checks no
// more arrive with the deliveries the caller already saw.
func (l *latencies) wait(t *testing.T, n int) []float64 {
	t.Helper()
	var got []float64
	poll.UntilNil(t, fmt.Sprintf("%d observations", n), func() error {
		l.mu.Lock()
		got = slices.Clone(l.secs)
		l.mu.Unlock()
		if len(got) < n {
			return fmt.Errorf("%d so far", len(got))
		}
		return nil
	})
	return got
}

// TestFirstDeliveryLatency checks that each message is observed once, at
// its first live delivery (to a subscription made before it was stored),
// with the time since it was stored on the store's clock: a later
// subscriber reading it does not observe it again, and history replayed
// to a new subscription is not observed at all (a message read 12 s
// later is no 12 s delivery latency).
func TestFirstDeliveryLatency(t *testing.T) {
	t.Parallel()
	lat := &latencies{}
	e := startEdge(t, func(o *server.Options) { o.FirstDelivery = lat })
	pub := e.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "lat", "message": "old"})
	e.clock.Advance(12 * time.Second)

	a := e.dial(t, "test", "")
	a.expectOK("rtm/subscribe", 1, map[string]any{"channel": "lat", "history": map[string]any{"count": 1}})
	a.recvData("lat", 1) // the replay: observed before it was written, if at all

	b := e.dial(t, "test", "")
	b.expectOK("rtm/subscribe", 1, map[string]any{"channel": "lat"})
	pub.expectOK("rtm/publish", 2, map[string]any{"channel": "lat", "message": 2})
	e.clock.Advance(30 * time.Millisecond)
	pub.expectOK("rtm/publish", 3, map[string]any{"channel": "lat", "message": 3})
	a.recvData("lat", 2)
	b.recvData("lat", 2)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "lat", "history": map[string]any{"count": 3}})
	c.recvData("lat", 3) // history again: nothing more observed
	pub.expectOK("rtm/publish", 4, map[string]any{"channel": "lat", "message": 4})
	for _, s := range []*rawClient{a, b, c} {
		s.recvData("lat", 1)
	}
	got := lat.wait(t, 3)
	// Message 2 waited 30 ms if its first delivery came after the clock
	// moved (the clock is the test's), else 0; 3 and 4 were delivered at
	// once.
	if len(got) != 3 || (got[0] != 0 && got[0] != 0.03) || got[1] != 0 || got[2] != 0 {
		t.Fatalf("observations %v, want [0 or 0.03, 0, 0]: one per message stored after a subscription, none for the replays", got)
	}
}

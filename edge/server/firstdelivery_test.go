package server_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
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

// wait returns the observations once there are n, failing after 5s; then
// it checks no more arrive with the deliveries the caller already saw.
func (l *latencies) wait(t *testing.T, n int) []float64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		l.mu.Lock()
		got := slices.Clone(l.secs)
		l.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d observations after 5s, want %d", len(got), n)
		}
		<-tick.C
	}
}

// TestFirstDeliveryLatency checks that each message is observed once, at
// its first delivery, with the time since it was stored on the store's
// clock; later subscribers reading it do not observe it again.
func TestFirstDeliveryLatency(t *testing.T) {
	t.Parallel()
	lat := &latencies{}
	e := startEdge(t, func(o *server.Options) { o.FirstDelivery = lat })
	pub := e.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "lat", "message": "first"})
	e.clock.Advance(40 * time.Millisecond)

	a := e.dial(t, "test", "")
	a.expectOK("rtm/subscribe", 1, map[string]any{"channel": "lat", "history": map[string]any{"count": 1}})
	a.recvData("lat", 1)
	if got := lat.wait(t, 1); got[0] != 0.04 {
		t.Fatalf("first delivery after 40ms observed as %vs", got[0])
	}

	b := e.dial(t, "test", "")
	b.expectOK("rtm/subscribe", 1, map[string]any{"channel": "lat", "history": map[string]any{"count": 1}})
	for i := 2; i <= 3; i++ {
		pub.expectOK("rtm/publish", i, map[string]any{"channel": "lat", "message": i})
	}
	a.recvData("lat", 2)
	b.recvData("lat", 3) // the history message, then the two new ones
	got := lat.wait(t, 3)
	if !slices.Equal(got, []float64{0.04, 0, 0}) {
		t.Fatalf("observations %v, want [0.04 0 0]: one per message, at its first delivery", got)
	}
}

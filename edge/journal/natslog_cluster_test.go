package journal_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
)

// logLines is a slog handler keeping "LEVEL msg peer=P attempts=N" lines.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (h *logLines) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (h *logLines) WithAttrs([]slog.Attr) slog.Handler           { return h }
func (h *logLines) WithGroup(string) slog.Handler                { return h }
func (h *logLines) Handle(_ context.Context, r slog.Record) error {
	line := r.Level.String() + " " + r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "peer" || a.Key == "attempts" {
			line += " " + a.Key + "=" + a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	h.lines = append(h.lines, line)
	h.mu.Unlock()
	return nil
}

// count returns how many lines contain s, and all of them.
func (h *logLines) count(s string) (int, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n, strings.Join(h.lines, "\n")
}

// TestClusterLogsItsWaitsQuietly: a node whose peer is not up yet logs
// the wait at INFO, no warning; once the peer was up and goes down, it
// warns once per attempt logged (not once per pooled route connection),
// at attempts 1 and 2 (then 4, 8, ...), with NATS's own messages.
func TestClusterLogsItsWaitsQuietly(t *testing.T) {
	ports := journaltest.FreePorts(t, 2)
	addrs := []string{fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])}
	routes := []string{"nats-route://" + addrs[0], "nats-route://" + addrs[1]}
	// The second node's one route is to itself, so the first is the one
	// that dials, and dials again once the other is down (a route the
	// other had dialled would be the other's to restore).
	start := func(i int, log *slog.Logger) *journal.Node {
		o := &journal.NodeOptions{DataDir: t.TempDir(), Name: fmt.Sprintf("n%d", i), ClusterName: "quiet",
			ClusterListen: addrs[i], Routes: routes[i:], Logger: log}
		n, err := journal.StartNode(o)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var logs logLines
	a := start(0, slog.New(&logs))
	defer a.Close()
	peer := "peer=" + addrs[1]
	poll.Until(t, "the node to log its wait for its peer", func() bool {
		n, _ := logs.count("INFO waiting for a cluster peer to come up: its route does not answer yet; retrying every second " + peer)
		return n == 1
	})
	if n, all := logs.count("WARN"); n != 0 {
		t.Errorf("a node waiting for its peer warned:\n%s", all)
	}
	b := start(1, journaltest.Logger())
	poll.Until(t, "the cluster to form", func() bool {
		info, err := a.Info()
		return err == nil && info.MetaLeader != ""
	})
	b.Close()
	const down = "WARN a cluster peer is down: its route does not answer; retrying every second, logged again after twice the attempts "
	poll.Until(t, "the node to warn twice of its peer down", func() bool {
		n, _ := logs.count(down + peer + " attempts=2")
		return n > 0
	})
	for _, attempt := range []string{"attempts=1", "attempts=2"} {
		if n, all := logs.count(down + peer + " " + attempt); n != 1 {
			t.Errorf("the node warned %d times of its peer down at %s, want once:\n%s", n, attempt, all)
		}
	}
	if n, all := logs.count("attempts=3"); n != 0 {
		t.Errorf("the node warned at attempt 3, want the next at 4:\n%s", all)
	}
}

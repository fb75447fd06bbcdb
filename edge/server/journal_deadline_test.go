package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
)

// TestJournalOneDeadline: with its log's quorum gone, an edge answers a
// compare-and-set write, a write reading the previous message, a purge
// and a plain publish (to a channel it holds, and to one it does not)
// within the one deadline every request has, the log's publish timeout
// (the time its reads of the log take is part of it), and says what the
// client may rely on: either that the message may have been stored, or
// that it surely was not.
func TestJournalOneDeadline(t *testing.T) {
	nodes := journaltest.Cluster(t, 3)
	const timeout = 2 * time.Second
	e := startJournalEdge(t, nodes[0], &journal.Options{Replicas: 3, AckWait: 200 * time.Millisecond, PublishTimeout: timeout})
	c := e.dial(t, "test", "")
	pos := c.expectOK("rtm/write", 1, map[string]any{"channel": "kv", "message": "one"})["position"].(string)
	nodes[1].Close()
	nodes[2].Close()
	// Cut from a quorum, the edge says it is not ready within a few
	// seconds (journal's readyNoLeader), for /readyz.
	// (Generous: the watchdog's looks wait 2 s each, and make test runs
	// this beside the whole tree on two cores.)
	poll.Within(t, 45*time.Second, "the edge reporting not ready without a stream leader", func() bool {
		err := e.srv.Ready()
		return err != nil && strings.Contains(err.Error(), "no leader")
	})
	tests := []struct {
		name   string
		action string
		body   map[string]any
	}{
		{"cas", "rtm/write", map[string]any{"channel": "kv", "message": "two", "position": pos}},
		{"previous", "rtm/publish", map[string]any{"channel": "kv", "message": "three", "read": "previous_message"}},
		{"purge", "rtm/delete", map[string]any{"channel": "kv", "purge": true}},
		{"publish", "rtm/publish", map[string]any{"channel": "kv", "message": "four"}},
		// A channel the edge does not hold: the app's channels are
		// counted in the log first, for its channel limit.
		{"new channel", "rtm/publish", map[string]any{"channel": "fresh", "message": "five"}},
	}
	for i, tt := range tests {
		start := time.Now()
		body := c.expectError(tt.action, 10+i, tt.body, "unavailable")
		took := time.Since(start)
		if took > timeout+time.Second {
			t.Errorf("%s: answered after %v, past the %v deadline", tt.name, took.Round(time.Millisecond), timeout)
		}
		r := body["reason"].(string)
		t.Logf("%s: %v: %s", tt.name, took.Round(time.Millisecond), r)
		if !strings.Contains(r, "may have been stored") && !strings.Contains(r, "will not") && !strings.Contains(r, "nothing was written") {
			t.Errorf("%s: reason %q says nothing of whether the message was stored", tt.name, r)
		}
		if strings.Contains(r, "probably") {
			t.Errorf("%s: reason %q guesses", tt.name, r)
		}
	}
}

package server_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/shared/rtm"
)

// plus returns pos with its offset moved by d.
func plus(t *testing.T, pos string, d uint64) string {
	t.Helper()
	p, err := rtm.ParsePosition(pos)
	if err != nil {
		t.Fatal(err)
	}
	p.Offset += d
	return p.String()
}

// checkFuturePositions publishes three messages and subscribes after the
// last (fine: the next message), then one further (refused with
// expired_position saying why, instead of waiting silently for offsets no
// one assigned), then there again with fast_forward (the oldest message).
func checkFuturePositions(t *testing.T, e *edge) {
	t.Helper()
	c := e.dial(t, "test", "")
	var last string
	for i := 1; i <= 3; i++ {
		last = c.expectOK("rtm/publish", i, map[string]any{"channel": "f", "message": i})["position"].(string)
	}
	next := plus(t, last, 1)
	if ok := c.expectOK("rtm/subscribe", 4, map[string]any{"channel": "f", "position": next}); ok["position"] != next {
		t.Fatalf("subscribe at the next position: %v", ok)
	}
	beyond := plus(t, last, 2)
	body := c.expectError("rtm/subscribe", 5, map[string]any{"channel": "f", "subscription_id": "g", "position": beyond}, "expired_position")
	if r := body["reason"].(string); !strings.Contains(r, "beyond") || body["position"] != beyond {
		t.Fatalf("refusal %v: want the position and a reason saying it is beyond the channel", body)
	}
	c.expectOK("rtm/subscribe", 6, map[string]any{"channel": "f", "subscription_id": "h", "position": beyond, "fast_forward": true})
	if p := c.recv(); p.Action != "rtm/subscription/info" || p.Body["info"] != "fast_forward" {
		t.Fatalf("fast_forward from the future: %s %v", p.Action, p.Body)
	}
	if msgs, _ := c.recvData("h", 3); msgs[0].(json.Number).String() != "1" {
		t.Fatalf("fast_forward started at %v, want 1", msgs[0])
	}
}

func TestFuturePositionRefused(t *testing.T) {
	t.Parallel()
	checkFuturePositions(t, startEdge(t, nil))
}

// In a cluster "beyond" is past the stream's last sequence, as the
// stream's leader still says at the request's deadline (it may lag a
// position another edge gave: checkFuture), here 3 s.
func TestJournalFuturePositionRefused(t *testing.T) {
	checkFuturePositions(t, startJournalEdge(t, startNode(t), &journal.Options{PublishTimeout: 3 * time.Second}))
}

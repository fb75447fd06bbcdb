package server_test

import (
	"fmt"
	"testing"
)

// A subscribe with history that crosses a channel's first publish gets the
// message, whichever of the two the edge serves first: before the fix the
// log was asked for the history before the live cursor was opened, and a
// message stored between the two was in neither (1 subscribe in 4 lost it
// on a durable single node).
func TestJournalHistorySubscribeCrossesPublish(t *testing.T) {
	e := startJournalEdge(t, startNode(t), nil)
	pub, sub := e.dial(t, "test", ""), e.dial(t, "test", "")
	for i := range 200 {
		ch := fmt.Sprintf("race%d", i)
		// Both requests leave at once, on two connections: the edge
		// serves them concurrently.
		sub.send("rtm/subscribe", i, map[string]any{"channel": ch, "history": map[string]any{"count": 1}})
		pub.send("rtm/publish", i, map[string]any{"channel": ch, "message": i})
		if p := pub.recv(); p.Action != "rtm/publish/ok" {
			t.Fatalf("publish to %s: %s %v", ch, p.Action, p.Body)
		}
		if p := sub.recv(); p.Action != "rtm/subscribe/ok" {
			t.Fatalf("subscribe to %s: %s %v", ch, p.Action, p.Body)
		}
		if got, _ := sub.recvData(ch, 1); fmt.Sprint(got[0]) != fmt.Sprint(i) {
			t.Fatalf("%s: got %v, want the message published, %d", ch, got, i)
		}
		sub.expectOK("rtm/unsubscribe", 1000+i, map[string]any{"subscription_id": ch})
	}
}

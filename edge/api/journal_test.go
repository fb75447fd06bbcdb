package api_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
)

// startJournalEdge serves the API of an edge whose log of record is a
// journal on an embedded NATS node.
func startJournalEdge(t *testing.T) *edge {
	t.Helper()
	return startJournalEdgeOn(t, journaltest.Node(t))
}

// startJournalEdgeOn serves the API of an edge with a journal on node n:
// edges on one node share its stream, as the edges of a cluster do.
func startJournalEdgeOn(t *testing.T, n *journal.Node) *edge {
	t.Helper()
	return startJournalEdgeWith(t, n, nil)
}

// startJournalEdgeWith is startJournalEdgeOn with the journal's options;
// the API describes the journal and its node in info.
func startJournalEdgeWith(t *testing.T, n *journal.Node, opts *journal.Options) *edge {
	t.Helper()
	j := journaltest.Open(t, n, opts)
	return startEdgeOf(t, &server.Options{Apps: testApps()}, j, &api.Options{Journals: []*journal.Journal{j}, Node: n})
}

// TestJournalEdge: on a durable edge an API publish is acknowledged by
// the log and delivered to an RTM subscriber; read and history are
// answered from the log, including channels no one on the edge follows.
func TestJournalEdge(t *testing.T) {
	e := startJournalEdge(t)
	sub := e.subscribe(t, "alpha", "j")
	first := position(t, e.ok(t, "publish", alphaKey, `{"channel":"j","message":"one","idempotency_key":"k1"}`))
	if p := sub.next(); len(p.Body.Messages) != 1 || string(p.Body.Messages[0]) != `"one"` {
		t.Fatalf("subscriber got %+v", p)
	}
	if retry := position(t, e.ok(t, "publish", alphaKey, `{"channel":"j","message":"one","idempotency_key":"k1"}`)); retry != first {
		t.Fatalf("retry answered %s, first %s", retry, first)
	}
	for i := 2; i <= 4; i++ {
		e.ok(t, "publish", alphaKey, `{"channel":"unfollowed","message":`+strconv.Itoa(i)+`}`)
	}
	got, _, _ := e.historyOf(t, alphaKey, `{"channel":"unfollowed","count":2}`)
	if strings.Join(got, ",") != "3,4" {
		t.Fatalf("history of the newest 2 = %v", got)
	}
	got, _, pages := e.historyOf(t, alphaKey, `{"channel":"j","position":"`+first.String()+`","limit":1}`)
	if strings.Join(got, ",") != `"one"` || pages != 1 {
		t.Fatalf("history of j = %v in %d pages", got, pages)
	}
	if a := e.ok(t, "read", alphaKey, `{"channel":"j"}`); a["message"] != "one" || a["position"] != first.String() {
		t.Fatalf("read %v", a)
	}
}

// TestIdempotencyAcrossEdges: edges sharing a stream (a cluster's) each
// remember their own answers, and the log remembers for all of them: a
// publish or broadcast retried with its idempotency_key on another edge
// stores nothing new and gets the first answer's positions; a request
// with another key is stored, and so is one with the same key for
// another message on an edge that did not see the first (it cannot be
// refused there, and must not be answered with the first's position).
func TestIdempotencyAcrossEdges(t *testing.T) {
	n := journaltest.Node(t)
	a, b := startJournalEdgeOn(t, n), startJournalEdgeOn(t, n)
	const req = `{"channel":"once","message":{"n":1},"idempotency_key":"order-17"}`
	first := position(t, a.ok(t, "publish", alphaKey, req))
	if retry := position(t, b.ok(t, "publish", alphaKey, req)); retry != first {
		t.Fatalf("the retry on the other edge answered %s, the first %s", retry, first)
	}
	other := position(t, b.ok(t, "publish", alphaKey, `{"channel":"once","message":{"n":1},"idempotency_key":"order-18"}`))
	changed := position(t, b.ok(t, "publish", alphaKey, `{"channel":"once","message":{"n":2},"idempotency_key":"order-19"}`))
	// The same key for another message, on an edge that has not seen it
	// (so that its own window cannot refuse it): the log keys the message
	// by its content too, so it is stored, not mistaken for the first.
	c := startJournalEdgeOn(t, n)
	reused := position(t, c.ok(t, "publish", alphaKey, `{"channel":"once","message":{"n":3},"idempotency_key":"order-17"}`))
	for _, p := range []string{other.String(), changed.String(), reused.String()} {
		if p == first.String() {
			t.Fatalf("a new request answered the first one's position %s", p)
		}
	}
	got, _, _ := a.historyOf(t, alphaKey, `{"channel":"once","count":10}`)
	if strings.Join(got, ",") != `{"n":1},{"n":1},{"n":2},{"n":3}` {
		t.Fatalf("the channel holds %v; want the first publish once, then the three others", got)
	}

	const bc = `{"channels":["x","y"],"message":"both","idempotency_key":"fanout-1"}`
	firstBC := b.ok(t, "broadcast", alphaKey, bc)
	retryBC := a.ok(t, "broadcast", alphaKey, bc)
	if fmt.Sprint(firstBC) != fmt.Sprint(retryBC) {
		t.Fatalf("the broadcast retried on the other edge answered %v, the first %v", retryBC, firstBC)
	}
	for _, ch := range []string{"x", "y"} {
		if got, _, _ := a.historyOf(t, alphaKey, `{"channel":"`+ch+`","count":10}`); strings.Join(got, ",") != `"both"` {
			t.Fatalf("channel %s holds %v after a broadcast and its retry", ch, got)
		}
	}
}

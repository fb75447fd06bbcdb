package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
)

// startHookEdge serves RTM and the API of an edge (with a journal on n,
// or alone when n is nil) whose alpha app's connect hook makes the
// ?token= the connection's user and tells each connection's id on ids
// (userHookApps).
func startHookEdge(t *testing.T, n *journal.Node, ids chan string) *edge {
	t.Helper()
	var j *journal.Journal
	if n != nil {
		j = journaltest.Open(t, n, nil)
	}
	return startEdgeOf(t, &server.Options{Apps: userHookApps(t, ids)}, j, nil)
}

// nextMessage reads the next data PDU and returns its one message and
// its position.
func (s *subscriber) nextMessage() (string, string) {
	s.t.Helper()
	p := s.next()
	if p.Action != "rtm/subscription/data" || len(p.Body.Messages) != 1 {
		s.t.Fatalf("got %+v, want data of one message", p)
	}
	return string(p.Body.Messages[0]), p.Body.Position
}

// checkExcludeConnection publishes through e's API, excluding alice's
// connection; alice is on ae, bob on be.
func checkExcludeConnection(t *testing.T, e, ae, be *edge, ids chan string) {
	t.Helper()
	// batch 1: each message's data position is its exact resume point
	alice, aliceID := ae.dialUserWith(t, ids, "alice", `{"channel":"room","batch":1}`)
	bob, _ := be.dialUserWith(t, ids, "bob", `{"channel":"room","batch":1}`)
	if strings.Contains(aliceID, "\"") || aliceID == "" {
		t.Fatalf("connection id %q", aliceID)
	}
	first := position(t, e.ok(t, "publish", alphaKey, `{"channel":"room","message":"not alice","exclude_connection":`+quoteJSON(aliceID)+`}`))
	second := position(t, e.ok(t, "publish", alphaKey, `{"channel":"room","message":"all"}`))
	// An id nobody has (the connection went) excludes nobody.
	third := position(t, e.ok(t, "publish", alphaKey, `{"channel":"room","message":"gone","exclude_connection":"nobody.1"}`))
	next := func(p string) string {
		t.Helper()
		q := position(t, map[string]any{"position": p})
		q.Offset++
		return q.String()
	}
	for _, step := range []struct {
		who  *subscriber
		msg  string
		want string
	}{
		{bob, `"not alice"`, next(first.String())}, {bob, `"all"`, next(second.String())}, {bob, `"gone"`, next(third.String())},
		{alice, `"all"`, next(second.String())}, {alice, `"gone"`, next(third.String())},
	} {
		if m, pos := step.who.nextMessage(); m != step.msg || pos != step.want {
			t.Fatalf("got %s at %s, want %s at %s", m, pos, step.msg, step.want)
		}
	}
	// Broadcast excludes it in each channel; history has everything.
	got := e.ok(t, "broadcast", alphaKey, `{"channels":["room"],"message":"bc","exclude_connection":`+quoteJSON(aliceID)+`}`)
	if res := got["results"].([]any); len(res) != 1 || res[0].(map[string]any)["position"] == nil {
		t.Fatalf("broadcast answered %v", got)
	}
	e.ok(t, "publish", alphaKey, `{"channel":"room","message":"end"}`)
	if m, _ := bob.nextMessage(); m != `"bc"` {
		t.Fatalf("bob got %s, want the broadcast", m)
	}
	if m, _ := alice.nextMessage(); m != `"end"` {
		t.Fatalf("alice got %s, want end (the broadcast excluded her)", m)
	}
	msgs, _, _ := e.historyOf(t, alphaKey, `{"channel":"room","position":"`+first.String()+`"}`)
	if strings.Join(msgs, ",") != `"not alice","all","gone","bc","end"` {
		t.Fatalf("history = %v, want every message", msgs)
	}
}

// TestExcludeConnection: publish and broadcast with exclude_connection,
// over real HTTP, reach every subscriber but that connection, on an
// edge alone and across two edges of one log (the excluded connection
// on the edge called, or on the other one).
func TestExcludeConnection(t *testing.T) {
	t.Parallel()
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		ids := make(chan string, 10)
		e := startHookEdge(t, nil, ids)
		checkExcludeConnection(t, e, e, e, ids)
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		ids := make(chan string, 10)
		n := journaltest.Node(t)
		a, b := startHookEdge(t, n, ids), startHookEdge(t, n, ids)
		t.Run("excluded on the edge called", func(t *testing.T) { checkExcludeConnection(t, a, a, b, ids) })
		t.Run("excluded on another edge", func(t *testing.T) { checkExcludeConnection(t, a, b, a, ids) })
	})
}

// TestExcludeConnectionRefusals: an id no edge could have made is
// invalid_format; the same idempotency_key with another exclusion is
// another request.
func TestExcludeConnectionRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	long := strings.Repeat("x", server.MaxConnectionIDBytes+1)
	e.call(t, "publish", alphaKey, `{"channel":"c","message":1,"exclude_connection":"`+long+`"}`).refused(t, http.StatusBadRequest, "invalid_format")
	e.call(t, "publish", alphaKey, `{"channel":"c","message":1,"exclude_connection":7}`).refused(t, http.StatusBadRequest, "invalid_format")
	e.ok(t, "publish", alphaKey, `{"channel":"c","message":1,"idempotency_key":"k","exclude_connection":"a.1"}`)
	e.ok(t, "publish", alphaKey, `{"channel":"c","message":1,"idempotency_key":"k","exclude_connection":"a.1"}`)
	e.call(t, "publish", alphaKey, `{"channel":"c","message":1,"idempotency_key":"k"}`).refused(t, http.StatusUnprocessableEntity, "idempotency_key_reused")
}

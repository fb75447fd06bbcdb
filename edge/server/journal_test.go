package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/store/storetest"
)

// startNode starts an embedded NATS node with JetStream in a fresh
// directory, closed when the test ends.
func startNode(t *testing.T) *journal.Node { return journaltest.Node(t) }

// restartableNode returns a start for an embedded node on one directory
// and client port: each call starts one (the last stopped), closed when
// the test ends, so that a test stops the log and brings it back, and
// the edge's connection comes back to it.
func restartableNode(t *testing.T) func() *journal.Node {
	dir, listen := t.TempDir(), fmt.Sprintf("127.0.0.1:%d", journaltest.FreePorts(t, 1)[0])
	return func() *journal.Node {
		n, err := journal.StartNode(&journal.NodeOptions{DataDir: dir, ClientListen: listen, Logger: journaltest.Logger()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Close)
		return n
	}
}

// startJournalEdge starts an edge whose log of record is the stream on n,
// with a store clock that starts at the real time (the log's messages
// carry real times).
func startJournalEdge(t *testing.T, n *journal.Node, jopts *journal.Options) *edge {
	t.Helper()
	return startJournalEdgeWith(t, n, jopts, nil)
}

// startJournalEdgeWith is startJournalEdge with mutate adjusting the
// server's options.
func startJournalEdgeWith(t *testing.T, n *journal.Node, jopts *journal.Options, mutate func(*server.Options)) *edge {
	t.Helper()
	return startJournalEdgeServed(t, n, jopts, mutate, nil)
}

// startJournalEdgeServed is startJournalEdgeWith served as o says (its
// Journal is the one opened on n).
func startJournalEdgeServed(t *testing.T, n *journal.Node, jopts *journal.Options, mutate func(*server.Options), o *servertest.Options) *edge {
	t.Helper()
	parts := []*journal.Journal{journaltest.Open(t, n, jopts)}
	if jopts != nil && jopts.Partitions > 1 {
		for p := 1; p < jopts.Partitions; p++ {
			o := *jopts
			o.Partition = p
			parts = append(parts, journaltest.Open(t, n, &o))
		}
	}
	clock := storetest.NewClock(time.Now())
	opts := &server.Options{
		Apps:         []*app.App{testApp()},
		StoreOptions: &store.Options{Clock: clock, SweepInterval: -1},
	}
	if mutate != nil {
		mutate(opts)
	}
	var so servertest.Options
	if o != nil {
		so = *o
	}
	so.Partitions = parts
	e := servertest.Start(t, opts, &so)
	return &edge{srv: e.Server, journal: parts[0], partitions: parts, clock: clock, url: e.URL}
}

// Publishes acknowledged by the log are answered in request order, with
// the other requests' replies among them where they came, and a read or
// subscribe after a publish sees it (read your writes).
func TestJournalRepliesInRequestOrder(t *testing.T) {
	e := startJournalEdge(t, startNode(t), nil)
	c := e.dial(t, "test", "")
	const n = 40
	for i := 1; i <= n; i++ {
		c.send("rtm/publish", i, map[string]any{"channel": "a", "message": i})
	}
	c.send("rtm/read", n+1, map[string]any{"channel": "a"})
	c.send("rtm/publish", "s", map[string]any{"channel": "", "message": 0}) // invalid: an error reply, in its place
	c.send("rtm/publish", n+2, map[string]any{"channel": "a", "message": n + 2})
	c.send("rtm/subscribe", n+3, map[string]any{"channel": "a", "history": map[string]any{"count": 1}})
	var last string
	for i := 1; i <= n; i++ {
		p := c.recv()
		if p.Action != "rtm/publish/ok" || p.ID.(json.Number).String() != itoa(i) {
			t.Fatalf("reply %d: got %s id %v %v", i, p.Action, p.ID, p.Body)
		}
		pos := p.Body["position"].(string)
		if last != "" && len(pos) == len(last) && pos <= last {
			t.Fatalf("position %s after %s does not increase", pos, last)
		}
		last = pos
	}
	if p := c.recv(); p.Action != "rtm/read/ok" || p.Body["position"] != last || p.Body["message"].(json.Number).String() != itoa(n) {
		t.Fatalf("read after the publishes: %s %v, want message %d at %s", p.Action, p.Body, n, last)
	}
	if p := c.recv(); p.Action != "rtm/publish/error" || p.ID != "s" {
		t.Fatalf("invalid publish: %s id %v, want rtm/publish/error id s", p.Action, p.ID)
	}
	p := c.recv()
	if p.Action != "rtm/publish/ok" || p.ID.(json.Number).String() != itoa(n+2) {
		t.Fatalf("publish after the read: %s id %v", p.Action, p.ID)
	}
	if p := c.recv(); p.Action != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %s %v", p.Action, p.Body)
	}
	if msgs, _ := c.recvData("a", 1); msgs[0].(json.Number).String() != itoa(n+2) {
		t.Fatalf("history of 1 = %v, want %d", msgs, n+2)
	}
}

// A second edge on the same stream, started after the messages were
// published and holding none of them, serves them from the log: a
// subscription at a position from the first edge continues with no gap
// and no duplicate into what is published live; reads and history too.
func TestJournalResumeOnAnotherEdge(t *testing.T) {
	node := startNode(t)
	a := startJournalEdge(t, node, nil)
	pa := a.dial(t, "test", "")
	var pos []string
	for i := 1; i <= 20; i++ {
		pos = append(pos, pa.expectOK("rtm/publish", i, map[string]any{"channel": "room", "message": i})["position"].(string))
	}
	// Replaying nothing: B must read everything before it from the log.
	b := startJournalEdge(t, node, &journal.Options{Replay: time.Nanosecond})
	sb := b.dial(t, "test", "")

	body := sb.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room", "position": pos[4]})
	if body["position"] != pos[4] {
		t.Fatalf("subscribe/ok position = %v, want %s", body["position"], pos[4])
	}
	msgs, _ := sb.recvData("room", 16)
	for i := 21; i <= 30; i++ {
		pa.expectOK("rtm/publish", i, map[string]any{"channel": "room", "message": i})
	}
	live, end := sb.recvData("room", 10)
	msgs = append(msgs, live...)
	for i, m := range msgs {
		if m.(json.Number).String() != itoa(i+5) {
			t.Fatalf("message %d = %v, want %d (all: %v)", i, m, i+5, msgs)
		}
	}
	// The data position resumes on edge A after the last message.
	sa := a.dial(t, "test", "")
	sa.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room", "position": end})
	pa.expectOK("rtm/publish", 31, map[string]any{"channel": "room", "message": 31})
	if got, _ := sa.recvData("room", 1); got[0].(json.Number).String() != "31" {
		t.Fatalf("resumed on A at %s: got %v, want 31", end, got)
	}

	rb := b.dial(t, "test", "")
	if r := rb.expectOK("rtm/read", 1, map[string]any{"channel": "room", "position": pos[9]}); r["position"] != pos[9] ||
		r["message"].(json.Number).String() != "10" {
		t.Fatalf("read at %s on B = %v, want message 10", pos[9], r)
	}
	// B holds 21 to 31 in memory (it followed the channel from 21 on):
	// the newest 20 start before that, so they come from the log, and
	// from the log's view, which has every message A acknowledged.
	rb.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room", "subscription_id": "h",
		"history": map[string]any{"count": 20}})
	if got, _ := rb.recvData("h", 20); got[0].(json.Number).String() != "12" || got[19].(json.Number).String() != "31" {
		t.Fatalf("history count 20 on B = %v, want 12 to 31", got)
	}
	// A channel B never followed: its newest message from the log.
	pa.expectOK("rtm/publish", 40, map[string]any{"channel": "kv", "message": "v"})
	c := startJournalEdge(t, node, &journal.Options{Replay: time.Nanosecond}).dial(t, "test", "")
	if r := c.expectOK("rtm/read", 1, map[string]any{"channel": "kv"}); r["message"] != "v" {
		t.Fatalf("read of kv on a fresh edge = %v, want v", r)
	}
}

// The log keeps messages longer than a channel's rule: reading them is
// still expired_position past the TTL, except the newest history.count.
func TestJournalAppliesRetentionRules(t *testing.T) {
	node := startNode(t)
	a := startJournalEdge(t, node, nil)
	pa := a.dial(t, "test", "")
	var pos []string
	for i := 1; i <= 5; i++ {
		pos = append(pos, pa.expectOK("rtm/publish", i, map[string]any{"channel": "old", "message": i})["position"].(string))
	}
	b := startJournalEdge(t, node, &journal.Options{Replay: time.Nanosecond})
	b.clock.Advance(2 * time.Minute) // past the 60 s TTL; history keeps the newest
	c := b.dial(t, "test", "")
	c.expectError("rtm/subscribe", 1, map[string]any{"channel": "old", "position": pos[1]}, "expired_position")
	c.expectError("rtm/read", 2, map[string]any{"channel": "old", "position": pos[1]}, "expired_position")
	if r := c.expectOK("rtm/read", 3, map[string]any{"channel": "old", "position": pos[4]}); r["message"].(json.Number).String() != "5" {
		t.Fatalf("read of the newest (kept by history) = %v, want 5", r)
	}
	c.expectOK("rtm/subscribe", 4, map[string]any{"channel": "old", "position": pos[1], "fast_forward": true})
	if p := c.recv(); p.Action != "rtm/subscription/info" || p.Body["info"] != "fast_forward" {
		t.Fatalf("fast-forward subscribe: got %s %v, want rtm/subscription/info fast_forward", p.Action, p.Body)
	}
	if got, _ := c.recvData("old", 1); got[0].(json.Number).String() != "5" {
		t.Fatalf("fast-forwarded to %v, want the newest, 5", got)
	}
}

// With its log gone, an edge refuses publishes with "unavailable" (no
// false ok), and subscribes too (they start after what the log
// acknowledged, which no leader says now), says it is not ready, and the
// connection stays usable.
func TestJournalUnavailable(t *testing.T) {
	node := startNode(t)
	e := startJournalEdge(t, node, &journal.Options{AckWait: 50 * time.Millisecond, PublishTimeout: 300 * time.Millisecond})
	c := e.dial(t, "test", "")
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": 1})
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "a", "history": map[string]any{"count": 1}})
	c.recvData("a", 1)
	if got := c.publishSubscribed(5, "a", map[string]any{"channel": "a", "message": 2}); got.(json.Number).String() != "2" {
		t.Fatalf("delivered %v, want 2", got)
	}
	node.Close()
	c.expectError("rtm/subscribe", 6, map[string]any{"channel": "a", "subscription_id": "h", "history": map[string]any{"count": 1}}, "unavailable")
	body := c.expectError("rtm/publish", 3, map[string]any{"channel": "a", "message": 2}, "unavailable")
	if r := body["reason"].(string); !strings.Contains(r, "may have been stored") && !strings.Contains(r, "did not store the message, and will not") {
		t.Fatalf("unavailable reason %q says neither that the message may have been stored nor that it was not", r)
	}
	if err := e.srv.Ready(); err == nil {
		t.Fatal("Ready = nil with the log gone")
	}
	c.expectOK("rtm/unsubscribe", 4, map[string]any{"subscription_id": "a"})
}

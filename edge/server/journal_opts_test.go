package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
)

// eachEdge runs test on an edge alone and on a durable edge (its log an
// embedded JetStream, the edge its sole writer, as sluice edge
// --data-dir runs it): PROTOCOL.md holds for both. (The cluster tests
// cover the feed reading every message back.)
func eachEdge(t *testing.T, test func(t *testing.T, e *edge)) {
	t.Helper()
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		test(t, startEdge(t, nil))
	})
	t.Run("durable", func(t *testing.T) {
		t.Parallel()
		test(t, startDurableEdge(t))
	})
}

// startDurableEdge starts a durable single edge as sluice edge
// --data-dir does: its own embedded node, the stream's sole writer.
func startDurableEdge(t *testing.T) *edge {
	t.Helper()
	return startJournalEdge(t, startNode(t), &journal.Options{SoleWriter: true})
}

// casRace has two connections (on one edge or two) write, at once, to the
// channel's newest position, round after round: exactly one write wins
// each round, and the other is refused with position_mismatch naming the
// winner's message and position. Then the channel holds every winner, in
// order, and nothing else.
func casRace(t *testing.T, a, b *rawClient, reader *rawClient, rounds int) {
	t.Helper()
	pos := reader.expectOK("rtm/read", 1, map[string]any{"channel": "race"})["position"].(string)
	var winners []any
	for r := range rounds {
		for i, c := range []*rawClient{a, b} {
			c.sendText(fmt.Sprintf(`{"action":"rtm/write","id":%d,"body":{"channel":"race","message":"%d-%d","position":"%s","read":"previous_message_on_error"}}`,
				r, r, i, pos))
		}
		pa, pb := a.recv(), b.recv()
		var win, lose pdu
		var winner string
		switch {
		case pa.Action == "rtm/write/ok" && pb.Action == "rtm/write/error":
			win, lose, winner = pa, pb, fmt.Sprintf("%d-0", r)
		case pb.Action == "rtm/write/ok" && pa.Action == "rtm/write/error":
			win, lose, winner = pb, pa, fmt.Sprintf("%d-1", r)
		default:
			t.Fatalf("round %d at %s: %s %v and %s %v, want one ok and one error", r, pos, pa.Action, pa.Body, pb.Action, pb.Body)
		}
		pos = win.Body["position"].(string)
		prev, _ := lose.Body["previous"].(map[string]any)
		if lose.Body["error"] != "position_mismatch" || prev["message"] != winner || prev["position"] != pos {
			t.Fatalf("round %d: the loser got %v, want position_mismatch with previous %s at %s", r, lose.Body, winner, pos)
		}
		winners = append(winners, winner)
	}
	reader.expectOK("rtm/subscribe", 2, map[string]any{"channel": "race", "history": map[string]any{"count": rounds + 5}})
	if got := recvMessages(reader, "race", rounds, logWait); fmt.Sprint(got) != fmt.Sprint(winners) {
		t.Fatalf("the channel holds %v, want the winners %v", got, winners)
	}
}

// previousChain has writers publish with read: previous_message all at
// once: each reply's previous message is exactly the one its message
// replaced, so the replies chain every message, from none (0:0) to the
// newest, each previous once.
func previousChain(t *testing.T, writers []*rawClient, each int) {
	t.Helper()
	for w, c := range writers {
		for i := range each {
			c.sendText(fmt.Sprintf(`{"action":"rtm/publish","id":%d,"body":{"channel":"chain","message":"%d-%d","read":"previous_message"}}`, i, w, i))
		}
	}
	next := map[string]string{} // previous position -> position
	msgAt := map[string]any{"0:0": nil}
	prevMsg := map[string]any{}
	for w, c := range writers {
		for i := range each {
			p := c.recvWithin(logWait)
			if p.Action != "rtm/publish/ok" {
				t.Fatalf("publish with read: %s %v", p.Action, p.Body)
			}
			pos, prev := p.Body["position"].(string), p.Body["previous"].(map[string]any)
			pp := prev["position"].(string)
			if other, dup := next[pp]; dup {
				t.Fatalf("%s and %s both replaced the message at %s", other, pos, pp)
			}
			next[pp], prevMsg[pp], msgAt[pos] = pos, prev["message"], fmt.Sprintf("%d-%d", w, i)
		}
	}
	n := 0
	for at := "0:0"; ; n++ {
		pos, ok := next[at]
		if !ok {
			break
		}
		if prevMsg[at] != msgAt[at] {
			t.Fatalf("the previous message at %s is %v, want %v", at, prevMsg[at], msgAt[at])
		}
		at = pos
	}
	if n != len(writers)*each {
		t.Fatalf("the replies chain %d messages from 0:0, want all %d (next: %v)", n, len(writers)*each, next)
	}
}

// TestJournalConditionalRaces: on a durable edge, compare-and-set and
// read previous are atomic with the log's append, between connections.
func TestJournalConditionalRaces(t *testing.T) {
	t.Parallel()
	e := startDurableEdge(t)
	t.Run("cas", func(t *testing.T) {
		casRace(t, e.dial(t, "test", ""), e.dial(t, "test", ""), e.dial(t, "test", ""), 20)
	})
	t.Run("previous", func(t *testing.T) {
		previousChain(t, []*rawClient{e.dial(t, "test", ""), e.dial(t, "test", ""), e.dial(t, "test", "")}, 15)
	})
}

// logWait bounds each wait for a reply that waits for the log.
const logWait = 30 * time.Second

// purgeRace purges the channel while a writer publishes to it: the
// purge's previous message is exactly the newest it dropped, so reading
// the channel back (on reader's edge) gives every message after it and
// none before.
func purgeRace(t *testing.T, writer, purger, reader *rawClient, n int) {
	t.Helper()
	posOf := map[string]int{}
	recv := func(i int) {
		p := writer.recvWithin(logWait)
		if p.Action != "rtm/publish/ok" {
			t.Fatalf("publish %d: %s %v", i, p.Action, p.Body)
		}
		posOf[p.Body["position"].(string)] = i
	}
	// One publish at a time, the purge sent among them: it reads, purges
	// and writes its marker while they go on.
	for i := range n {
		if i == n/10 {
			purger.sendText(`{"action":"rtm/delete","id":1,"body":{"channel":"pr","purge":true,"read":"previous_message"}}`)
		}
		writer.send("rtm/publish", i, map[string]any{"channel": "pr", "message": i})
		recv(i)
	}
	p := purger.recvWithin(logWait)
	prev, _ := p.Body["previous"].(map[string]any)
	if p.Action != "rtm/delete/ok" || prev == nil {
		t.Fatalf("purge: %s %v", p.Action, p.Body)
	}
	cut := -1 // the last message purged
	if prev["message"] != nil {
		var ok bool
		if cut, ok = posOf[prev["position"].(string)]; !ok || fmt.Sprint(cut) != fmt.Sprint(prev["message"]) {
			t.Fatalf("the purge's previous %v is none of the messages published", prev)
		}
	}
	t.Logf("the purge dropped messages 0..%d of 0..%d", cut, n-1)
	var want []any
	for i := cut + 1; i < n; i++ {
		want = append(want, fmt.Sprint(i))
	}
	reader.expectOK("rtm/publish", 1, map[string]any{"channel": "pr", "message": "end"})
	want = append(want, "end")
	reader.expectOK("rtm/subscribe", 2, map[string]any{"channel": "pr", "history": map[string]any{"count": n + 1}})
	got := recvMessages(reader, "pr", len(want), logWait)
	for i := range got {
		got[i] = fmt.Sprint(got[i])
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after a purge replacing %d (of 0..%d): %v, want %v", cut, n-1, got, want)
	}
}

// TestJournalPurgeRace: on a durable edge, a purge among publishes drops
// exactly the messages before its previous message.
func TestJournalPurgeRace(t *testing.T) {
	t.Parallel()
	e := startDurableEdge(t)
	purgeRace(t, e.dial(t, "test", ""), e.dial(t, "test", ""), e.dial(t, "test", ""), 200)
}

// TestJournalClusterOptions: on one R3 stream across the edges of a
// cluster, compare-and-set has one winner and read previous chains, a
// purge reaches the other edges in the log's order, and a prefix
// subscription on one edge gets the channels another edge makes.
func TestJournalClusterOptions(t *testing.T) {
	nodes := journaltest.Cluster(t, 3)
	edges := make([]*edge, 2)
	for i := range edges {
		edges[i] = startJournalEdge(t, nodes[i], &journal.Options{Replicas: 3})
	}
	t.Run("write", func(t *testing.T) { clusterWrite(t, edges[0], edges[1]) })
	t.Run("cas race", func(t *testing.T) {
		casRace(t, edges[0].dial(t, "test", ""), edges[1].dial(t, "test", ""), edges[1].dial(t, "test", ""), 10)
	})
	t.Run("previous", func(t *testing.T) {
		previousChain(t, []*rawClient{edges[0].dial(t, "test", ""), edges[1].dial(t, "test", "")}, 10)
	})
	t.Run("purge", func(t *testing.T) { clusterPurge(t, edges[0], edges[1]) })
	t.Run("purge race", func(t *testing.T) {
		purgeRace(t, edges[0].dial(t, "test", ""), edges[1].dial(t, "test", ""), edges[1].dial(t, "test", ""), 200)
	})
	t.Run("prefix", func(t *testing.T) { testPrefixSubscription(t, edges[0], edges[1]) })
	t.Run("ttl", func(t *testing.T) { clusterTTL(t, edges[0], edges[1]) })
}

// clusterTTL: a dead man's switch armed on one edge fires unless
// something is published on the channel on any edge within ttl, and a
// switch armed on another edge replaces it.
func clusterTTL(t *testing.T, ea, eb *edge) {
	a, b := ea.dial(t, "test", ""), eb.dial(t, "test", "")
	sub := eb.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "dms"})
	a.raw(`{"action":"rtm/publish","id":1,"body":{"channel":"dms","message":"alive","ttl":1,"ttl_message":"dead"}}`, 1)
	if msgs, _ := sub.recvData("dms", 2); fmt.Sprint(msgs) != "[alive dead]" {
		t.Fatalf("a switch that fired: %v, want alive then dead", msgs)
	}
	poll.Until(t, "the switch counted as fired", func() bool { return ea.srv.Stats().TTL.Fired == 1 })
	// The other edge's standby of it finds the channel moved on (the
	// messages below show no second dead).
	poll.Until(t, "the other edge's standby passed", func() bool { return eb.srv.Stats().TTL.Passed == 1 })
	// Armed on one edge, then a publish on the other well within its 2 s.
	a.raw(`{"action":"rtm/write","id":2,"body":{"channel":"dms","message":"alive again","ttl":2,"ttl_message":"dead"}}`, 2)
	b.expectOK("rtm/publish", 3, map[string]any{"channel": "dms", "message": "still here"})
	poll.Until(t, "the switch skipped", func() bool { return ea.srv.Stats().TTL.Skipped == 1 })
	// Armed on one edge, then again on the other: the second replaces it,
	// on both (the first edge holds its standby, which passes once the
	// other fired it).
	a.raw(`{"action":"rtm/publish","id":4,"body":{"channel":"dms","message":"x","ttl":2,"ttl_message":"from a"}}`, 4)
	b.raw(`{"action":"rtm/publish","id":5,"body":{"channel":"dms","message":"y","ttl":1,"ttl_message":"from b"}}`, 5)
	poll.Until(t, "the second switch fired, the first edge's standby of it passed", func() bool {
		return eb.srv.Stats().TTL.Fired == 1 && ea.srv.Stats().TTL.Passed == 1
	})
	b.expectOK("rtm/publish", 6, map[string]any{"channel": "dms", "message": "end"})
	if msgs, _ := sub.recvData("dms", 6); fmt.Sprint(msgs) != "[alive again still here x y from b end]" {
		t.Fatalf("after the switches: %v, want alive again, still here, x, y, from b, end", msgs)
	}
	if st := ea.srv.Stats(); st.TTL.Fired != 1 || st.TTL.Skipped != 1 || st.TTL.TakenOver != 0 {
		t.Fatalf("the first edge fired %d switches, skipped %d, took over %d; want still 1, 1 (its replaced one never came due), 0",
			st.TTL.Fired, st.TTL.Skipped, st.TTL.TakenOver)
	}
	if st := eb.srv.Stats(); st.TTL.TakenOver != 0 {
		t.Fatalf("the second edge took over %d switches of a live edge", st.TTL.TakenOver)
	}
}

// clusterWrite: a write's position from one edge is the newest on
// another, and a stale one is refused there.
func clusterWrite(t *testing.T, ea, eb *edge) {
	a, b := ea.dial(t, "test", ""), eb.dial(t, "test", "")
	p := a.expectOK("rtm/write", 1, map[string]any{"channel": "kv", "message": "one"})["position"].(string)
	wantBody(t, b.raw(`{"action":"rtm/write","id":2,"body":{"channel":"kv","message":"two","position":"`+p+`","read":"previous_message"}}`, 2),
		"rtm/write/ok", map[string]any{"position": b.lastPosition(t, "kv"), "previous": map[string]any{"message": "one", "position": p}})
	stale := a.raw(`{"action":"rtm/write","id":3,"body":{"channel":"kv","message":"three","position":"`+p+`"}}`, 3)
	if stale.Body["error"] != "position_mismatch" {
		t.Fatalf("a CAS at %s after another edge's write: %s %v, want position_mismatch", p, stale.Action, stale.Body)
	}
}

// clusterPurge: a purge on one edge reaches the other in the log's
// order: there a live subscriber reads on with the next message, a
// position before the purge is expired, one after the purged messages
// resumes with the next message, and history holds only what came after.
func clusterPurge(t *testing.T, ea, eb *edge) {
	a, b := ea.dial(t, "test", ""), eb.dial(t, "test", "")
	live := eb.dial(t, "test", "")
	live.expectOK("rtm/subscribe", 1, map[string]any{"channel": "h"})
	p1 := a.expectOK("rtm/publish", 1, map[string]any{"channel": "h", "message": 1})["position"].(string)
	a.expectOK("rtm/publish", 2, map[string]any{"channel": "h", "message": 2})
	msgs, end := live.recvData("h", 2)
	if fmt.Sprint(msgs) != "[1 2]" {
		t.Fatalf("before the purge: %v", msgs)
	}
	wantBody(t, a.raw(`{"action":"rtm/delete","id":3,"body":{"channel":"h","purge":true}}`, 3), "rtm/delete/ok", map[string]any{})
	after := a.expectOK("rtm/publish", 4, map[string]any{"channel": "h", "message": "after"})["position"]
	// The other edge applies the log in order: with "after" delivered
	// there, so is the purge before it.
	if msgs, _ := live.recvData("h", 1); fmt.Sprint(msgs) != "[after]" {
		t.Fatalf("live subscriber on the other edge after the purge: %v, want after", msgs)
	}
	b.expectError("rtm/read", 5, map[string]any{"channel": "h", "position": p1}, "expired_position")
	if r := b.expectOK("rtm/read", 6, map[string]any{"channel": "h"}); r["message"] != "after" || r["position"] != after {
		t.Fatalf("read on the other edge after the purge: %v, want after at %v", r, after)
	}
	resume := eb.dial(t, "test", "")
	resume.expectOK("rtm/subscribe", 7, map[string]any{"channel": "h", "position": end})
	if msgs, _ := resume.recvData("h", 1); fmt.Sprint(msgs) != "[after]" {
		t.Fatalf("resumed at %s, after the purged messages, on the other edge: %v, want after", end, msgs)
	}
	hist := eb.dial(t, "test", "")
	hist.expectOK("rtm/subscribe", 8, map[string]any{"channel": "h", "history": map[string]any{"count": 10}})
	if msgs, _ := hist.recvData("h", 1); fmt.Sprint(msgs) != "[after]" {
		t.Fatalf("history on the other edge after the purge: %v, want only after", msgs)
	}
}

package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/internal/poll"
)

// TestJournalSwitchOutlivesItsEdge: a dead man's switch is kept by the
// log with the publish that armed it, so it fires once its edge is gone:
// another edge of the stream fires it, and so does the edge itself once
// restarted. (While its edge lives, the others fire nothing: clusterTTL.)
func TestJournalSwitchOutlivesItsEdge(t *testing.T) {
	t.Run("another edge fires it", func(t *testing.T) {
		node := startNode(t)
		a, b := startJournalEdge(t, node, nil), startJournalEdge(t, node, nil)
		sub := b.dial(t, "test", "")
		sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "dms"})
		a.dial(t, "test", "").raw(`{"action":"rtm/publish","id":1,"body":{"channel":"dms","message":"alive","ttl":2,"ttl_message":"dead"}}`, 1)
		crash(t, a)
		if msgs, _ := sub.recvData("dms", 2); fmt.Sprint(msgs) != "[alive dead]" {
			t.Fatalf("the switch of an edge that went: %v, want alive then dead", msgs)
		}
		poll.Until(t, "the other edge counting its takeover", func() bool { return b.srv.Stats().TTL.TakenOver == 1 })
	})
	t.Run("a restarted edge fires it", func(t *testing.T) {
		node := startNode(t)
		// A durable single node, as `sluice edge --data-dir` runs it: it
		// appends its own publishes without the feed, until it restarts.
		opts := &journal.Options{SoleWriter: true}
		a := startJournalEdge(t, node, opts)
		at := a.dial(t, "test", "").raw(`{"action":"rtm/publish","id":1,"body":{"channel":"dms","message":"alive","ttl":2,"ttl_message":"dead"}}`, 1).Body["position"].(string)
		crash(t, a)
		firesAfterRestart(t, node, opts, at)
	})
}

// firesAfterRestart starts an edge on node again and checks that it fires
// the switch armed at position at of the channel dms: a subscriber from
// there gets alive, then dead, and the edge counts a takeover. It returns
// the edge and the subscriber.
func firesAfterRestart(t *testing.T, node *journal.Node, opts *journal.Options, at string) (*edge, *rawClient) {
	t.Helper()
	again := startJournalEdge(t, node, opts)
	sub := again.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "dms", "position": at})
	if msgs, _ := sub.recvData("dms", 2); fmt.Sprint(msgs) != "[alive dead]" {
		t.Fatalf("the switch armed before the restart: %v, want alive then dead", msgs)
	}
	poll.Until(t, "the restarted edge counting its takeover", func() bool { return again.srv.Stats().TTL.TakenOver == 1 })
	return again, sub
}

// TestJournalSwitchReplay: a restart replays every switch its window
// holds, most of them replaced by the next or disarmed by a later
// publish; only the channel's last one is held, and it passes without
// asking the log when the channel moved on after it.
func TestJournalSwitchReplay(t *testing.T) {
	node := startNode(t)
	opts := &journal.Options{SoleWriter: true}
	a := startJournalEdge(t, node, opts)
	p := a.dial(t, "test", "")
	var first string
	for i := 1; i <= 20; i++ {
		body := p.raw(fmt.Sprintf(`{"action":"rtm/publish","id":%d,"body":{"channel":"hb","message":%d,"ttl":1,"ttl_message":"dead"}}`, i, i), i).Body
		if i == 1 {
			first = body["position"].(string)
		}
	}
	p.expectOK("rtm/publish", 21, map[string]any{"channel": "hb", "message": "bye"})
	poll.Until(t, "the last switch skipped (bye came after it)", func() bool { return a.srv.Stats().TTL.Skipped == 1 })
	crash(t, a)
	again := startJournalEdge(t, node, opts)
	poll.Until(t, "the replayed switches' standby passed", func() bool { return again.srv.Stats().TTL.Passed >= 1 })
	if st := again.srv.Stats(); st.TTL.Passed != 1 || st.TTL.TakenOver != 0 || st.TTL.Retried != 0 {
		t.Fatalf("after the replay: %d standbys passed, %d took over, %d retried; want 1, 0, 0 (one held per channel)",
			st.TTL.Passed, st.TTL.TakenOver, st.TTL.Retried)
	}
	sub := again.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "hb", "position": first})
	msgs, _ := sub.recvData("hb", 21)
	if fmt.Sprint(msgs[19:]) != "[20 bye]" {
		t.Fatalf("the channel ends with %v, want 20 then bye and no dead", msgs[19:])
	}
	again.dial(t, "test", "").expectOK("rtm/publish", 2, map[string]any{"channel": "hb", "message": "end"})
	if got, _ := sub.recvData("hb", 1); fmt.Sprint(got) != "[end]" {
		t.Fatalf("after bye: %v, want end (nothing in between)", got)
	}
}

// TestJournalSwitchOlderThanTheReplay: a switch armed before a restarted
// edge's replay window (a ttl longer than the window, and no other edge
// to hold it, as a durable single node's deploy) still fires: the log's
// last message of its channel arms it. A channel that moved on after its
// switch gets nothing.
func TestJournalSwitchOlderThanTheReplay(t *testing.T) {
	node := startNode(t)
	// A replay of a millisecond: the restart replays none of this.
	opts := &journal.Options{SoleWriter: true, Replay: time.Millisecond}
	a := startJournalEdge(t, node, opts)
	p := a.dial(t, "test", "")
	at := p.raw(`{"action":"rtm/publish","id":1,"body":{"channel":"dms","message":"alive","ttl":2,"ttl_message":"dead"}}`, 1).Body["position"].(string)
	beat := p.raw(`{"action":"rtm/publish","id":2,"body":{"channel":"hb","message":"beat","ttl":1,"ttl_message":"dead"}}`, 2).Body["position"].(string)
	p.expectOK("rtm/publish", 3, map[string]any{"channel": "hb", "message": "bye"})
	crash(t, a)
	again, sub := firesAfterRestart(t, node, opts, at)
	sub.expectOK("rtm/subscribe", 2, map[string]any{"channel": "hb", "position": beat})
	again.dial(t, "test", "").expectOK("rtm/publish", 1, map[string]any{"channel": "hb", "message": "end"})
	if msgs, _ := sub.recvData("hb", 3); fmt.Sprint(msgs) != "[beat bye end]" {
		t.Fatalf("the channel that moved on: %v, want beat, bye, end and no dead", msgs)
	}
	if st := again.srv.Stats(); st.TTL.Passed != 0 || st.TTL.TakenOver != 1 {
		t.Fatalf("%d standbys passed and %d took over; want 0 and 1 (none held for the channel that moved on)", st.TTL.Passed, st.TTL.TakenOver)
	}
}

// crash takes e away as a crash does, before its switches come due: its
// log connection first, so that a switch it fires meanwhile is not
// stored, then its server.
func crash(t *testing.T, e *edge) {
	t.Helper()
	e.journal.Close()
	e.srv.Hurry()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestJournalSwitchAcrossALogOutage: a switch that comes due while the
// log is unreachable is not dropped: it is tried again until the log is
// back, and then published once.
func TestJournalSwitchAcrossALogOutage(t *testing.T) {
	start := restartableNode(t)
	node := start()
	e := startJournalEdge(t, node, &journal.Options{AckWait: 50 * time.Millisecond, PublishTimeout: 300 * time.Millisecond})
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "dms"})
	e.dial(t, "test", "").raw(`{"action":"rtm/publish","id":1,"body":{"channel":"dms","message":"alive","ttl":2,"ttl_message":"dead"}}`, 1)
	if msgs, _ := sub.recvData("dms", 1); fmt.Sprint(msgs) != "[alive]" {
		t.Fatalf("before the outage: %v", msgs)
	}
	node.Close()
	poll.Until(t, "the switch tried again after the log failed it", func() bool { return e.srv.Stats().TTL.Retried >= 1 })
	start() // the same files and port: the edge's connection comes back
	if msgs, _ := sub.recvData("dms", 1); fmt.Sprint(msgs) != "[dead]" {
		t.Fatalf("after the outage: %v, want dead", msgs)
	}
	// Whichever attempt the log stored (the first, whose fate was
	// unknown, once the journal's asking reached it; or the retry), the
	// retry is settled: it published, or found the first one there.
	poll.Until(t, "the retried switch settled", func() bool {
		st := e.srv.Stats()
		return st.TTL.TakenOver+st.TTL.Passed == 1
	})
	if st := e.srv.Stats(); st.TTL.Fired != 0 || st.TTL.Skipped != 0 {
		t.Fatalf("fired %d and skipped %d: the first attempt failed its switch, the retry settled it", st.TTL.Fired, st.TTL.Skipped)
	}
	e.dial(t, "test", "").expectOK("rtm/publish", 2, map[string]any{"channel": "dms", "message": "end"})
	if msgs, _ := sub.recvData("dms", 1); fmt.Sprint(msgs) != "[end]" {
		t.Fatalf("after the switch: %v, want end alone (dead once)", msgs)
	}
}

// TestJournalSwitchWithinRetention: a switch fires by a compare-and-set at
// the publish that armed it, so an edge whose log keeps messages 70 s
// refuses a ttl that would outlast them, saying why, instead of
// acknowledging a switch that could never fire; a ttl inside takes.
func TestJournalSwitchWithinRetention(t *testing.T) {
	e := startJournalEdge(t, startNode(t), &journal.Options{MaxAge: 70 * time.Second})
	c := e.dial(t, "test", "")
	body := c.expectError("rtm/publish", 1, map[string]any{"channel": "dms", "message": "alive", "ttl": 61, "ttl_message": "dead"}, "invalid_format")
	if reason, _ := body["reason"].(string); !strings.Contains(reason, "at most 60 seconds") || !strings.Contains(reason, "1m10s") {
		t.Errorf("refused with %q; want the limit (60 s) and the log's retention (1m10s)", reason)
	}
	c.expectOK("rtm/publish", 2, map[string]any{"channel": "dms", "message": "alive", "ttl": 60, "ttl_message": "dead"})
}

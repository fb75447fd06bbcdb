package server_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/internal/poll"
)

// interestEdges starts n edges fed by interest on one node.
func interestEdges(t *testing.T, n int, opts *journal.Options) []*edge {
	t.Helper()
	node := startNode(t)
	o := journal.Options{Interest: true}
	if opts != nil {
		o = *opts
		o.Interest = true
	}
	es := make([]*edge, n)
	for i := range es {
		es[i] = startJournalEdge(t, node, &o)
	}
	return es
}

// hopper is a subscriber that moves between edges, resuming at the
// position its last subscription ended at.
type hopper struct {
	channel string
	conns   []*rawClient // one per edge
	on      int          // the edge of the current subscription
	got     []string
	next    string // the position to resume at
}

// take reads what the current subscription delivers until the reply to
// request id (of action), and returns that reply's body.
func (h *hopper) take(action string, id int) map[string]any {
	c := h.conns[h.on]
	c.t.Helper()
	for {
		p := c.recv()
		switch {
		case p.Action == "rtm/subscription/data" && p.Body["subscription_id"] == h.channel:
			for _, m := range p.Body["messages"].([]any) {
				h.got = append(h.got, m.(string))
			}
		case p.Action == action && p.ID != nil && p.ID.(json.Number).String() == itoa(id):
			return p.Body
		default:
			c.t.Fatalf("%s: waiting for %s %d: got %s %v", h.channel, action, id, p.Action, p.Body)
		}
	}
}

// hop ends the subscription and subscribes again on edge to, at the
// position the first ended at.
func (h *hopper) hop(to, id int) {
	h.conns[h.on].send("rtm/unsubscribe", id, map[string]any{"subscription_id": h.channel})
	h.next = h.take("rtm/unsubscribe/ok", id)["position"].(string)
	h.on = to
	h.conns[to].send("rtm/subscribe", id, map[string]any{"channel": h.channel, "position": h.next})
	h.take("rtm/subscribe/ok", id)
}

// Subscribers hop between edges fed by interest while messages are
// published over many channels from another edge: each gets every
// acknowledged message of its channel from where it started, once, in
// order. Each hop may start or end an edge's interest in the channel
// while its messages are in flight.
func TestInterestSubscribersHopBetweenEdges(t *testing.T) {
	forPartitions(t, testSubscribersHop)
}

// forPartitions runs test on a log of one partition and on one of four
// (a stream each, the channels spread over them).
func forPartitions(t *testing.T, test func(t *testing.T, partitions int)) {
	for _, k := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", k), func(t *testing.T) { test(t, k) })
	}
}

func testSubscribersHop(t *testing.T, partitions int) {
	es := interestEdges(t, 3, &journal.Options{Partitions: partitions})
	r := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	const channels, perHop = 40, 6
	pub := es[0].dial(t, "test", "")
	hs := make([]*hopper, channels)
	for i := range hs {
		h := &hopper{channel: fmt.Sprintf("hop-%d", i), on: 1 + i%2}
		for _, e := range es {
			h.conns = append(h.conns, e.dial(t, "test", ""))
		}
		h.conns[h.on].send("rtm/subscribe", 1, map[string]any{"channel": h.channel})
		h.take("rtm/subscribe/ok", 1)
		hs[i] = h
	}
	acked := make(map[string][]string)
	sent := 0
	id := 10
	for range 30 {
		// A burst in flight (its acks read later), then some hops.
		for range perHop * 4 {
			h := hs[r.IntN(channels)]
			sent++
			msg := fmt.Sprintf("%s/%d", h.channel, sent)
			pub.send("rtm/publish", sent, map[string]any{"channel": h.channel, "message": msg})
			acked[h.channel] = append(acked[h.channel], msg)
		}
		for range perHop {
			id++
			h := hs[r.IntN(channels)]
			h.hop(r.IntN(len(es)), id)
		}
	}
	for n := 0; n < sent; n++ {
		if p := pub.recv(); p.Action != "rtm/publish/ok" {
			t.Fatalf("publish: %s %v", p.Action, p.Body)
		}
	}
	// A last message per channel ends what each subscriber must get.
	for _, h := range hs {
		id++
		msg := h.channel + "/end"
		pub.expectOK("rtm/publish", id, map[string]any{"channel": h.channel, "message": msg})
		acked[h.channel] = append(acked[h.channel], msg)
	}
	for _, h := range hs {
		c := h.conns[h.on]
		for !slices.Contains(h.got, h.channel+"/end") {
			p := c.recv()
			if p.Action != "rtm/subscription/data" || p.Body["subscription_id"] != h.channel {
				t.Fatalf("%s: got %s %v", h.channel, p.Action, p.Body)
			}
			for _, m := range p.Body["messages"].([]any) {
				h.got = append(h.got, m.(string))
			}
		}
		if want := acked[h.channel]; !slices.Equal(h.got, want) {
			t.Fatalf("%s got %d messages %v,\nwant %d %v", h.channel, len(h.got), h.got, len(want), want)
		}
	}
}

// An edge gains and loses interest in a channel while its messages
// flow: the last subscriber leaves as messages arrive, another joins at
// a position older than what the edge holds (the follow ended, and it
// preloads only the replay window). Nothing is lost, nothing twice.
func TestInterestGainedAndLostWhileMessagesFlow(t *testing.T) {
	forPartitions(t, testInterestGainedAndLost)
}

func testInterestGainedAndLost(t *testing.T, partitions int) {
	es := interestEdges(t, 2, &journal.Options{Replay: time.Nanosecond, Partitions: partitions})
	pub, sub := es[0].dial(t, "test", ""), es[1].dial(t, "test", "")
	var all []string
	var first string
	id := 0
	publish := func(n int) {
		for range n {
			id++
			msg := fmt.Sprintf("m%d", id)
			p := pub.expectOK("rtm/publish", id, map[string]any{"channel": "flow", "message": msg})
			if first == "" {
				first = p["position"].(string)
			}
			all = append(all, msg)
		}
	}
	publish(5)
	for round := range 20 {
		// Join at the very first position: older than anything the
		// edge holds, so the start is read from the log, then live.
		id++
		sub.expectOK("rtm/subscribe", id, map[string]any{"channel": "flow", "position": first})
		// Messages in flight as the subscriber reads and then leaves.
		for range 3 {
			id++
			msg := fmt.Sprintf("m%d", id)
			pub.send("rtm/publish", id, map[string]any{"channel": "flow", "message": msg})
			all = append(all, msg)
		}
		got, _ := sub.recvData("flow", len(all))
		if !slices.Equal(anyStrings(got), all) {
			t.Fatalf("round %d: got %v, want %v", round, got, all)
		}
		id++
		sub.send("rtm/unsubscribe", id, map[string]any{"subscription_id": "flow"})
		for n := 0; n < 3; n++ {
			if p := pub.recv(); p.Action != "rtm/publish/ok" {
				t.Fatalf("publish: %s %v", p.Action, p.Body)
			}
		}
		if p := sub.recv(); p.Action != "rtm/unsubscribe/ok" {
			t.Fatalf("unsubscribe: %s %v", p.Action, p.Body)
		}
		if round%5 == 4 {
			// Let the follow end (its linger), so the next join starts it
			// again from the log.
			publish(1)
			for _, j := range es[1].partitions {
				waitUnfollowed(t, j)
			}
		}
	}
}

// waitUnfollowed waits until j follows no channel.
func waitUnfollowed(t *testing.T, j *journal.Journal) {
	t.Helper()
	poll.Within(t, 30*time.Second, "the edge to stop following", func() bool { return j.Following() == 0 })
}

func anyStrings(ms []any) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprint(m)
	}
	return out
}

// The server API's channels, on an edge fed by interest, lists the
// channels the log holds, not only those the edge follows: here an edge
// that never followed any lists those another edge published to, by
// prefix and in pages.
func TestInterestListsChannelsItDoesNotFollow(t *testing.T) {
	es := interestEdges(t, 2, nil)
	pub := es[0].dial(t, "test", "")
	want := []string{"room.a", "room.b", "room.c", "zeta"}
	for i, ch := range want {
		pub.expectOK("rtm/publish", i+1, map[string]any{"channel": ch, "message": i})
	}
	ctx := t.Context()
	var got []string
	after := ""
	for {
		page, more, err := es[1].srv.BackendChannels(ctx, "test", "room.", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if !more {
			break
		}
		after = page[len(page)-1]
	}
	if !slices.Equal(got, want[:3]) {
		t.Fatalf("channels under room. on an edge following none: %q, want %q", got, want[:3])
	}
	if all, more, err := es[1].srv.BackendChannels(ctx, "test", "", "", 10); err != nil || more || !slices.Equal(all, want) {
		t.Fatalf("all channels: %q more %v, %v; want %q", all, more, err, want)
	}
}

package server_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// excludeFrames are the publisher's exclude_self publish, as a client
// writes it, in each codec: JSON by hand, the others through the codec.
func excludePublish(t *testing.T, c codec.Codec, id int64) []byte {
	t.Helper()
	if c.Name() == "json" {
		return []byte(`{"action":"rtm/publish","id":` + itoa(int(id)) +
			`,"body":{"channel":"room","message":{"text":"mine"},"exclude_self":true}}`)
	}
	frame, err := c.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(id),
		Body: &rtm.PublishBody{Channel: "room", Message: mine, ExcludeSelf: true}})
	if err != nil {
		t.Fatal(err)
	}
	return frame
}

// The messages of the scenario: maps, which views select.
var (
	mine     = map[string]any{"text": "mine"}
	everyone = map[string]any{"text": "everyone"}
)

// writeFrame writes one frame of the client's codec.
func (c *codecClient) writeFrame(frame []byte) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, frameType(c.codec), frame); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// received is what a client got: each subscription's data PDUs, and
// the positions its publishes were acknowledged with, by id.
type received struct {
	data map[string][]rtm.SubscriptionData
	oks  map[int64]string
}

// collect reads PDUs until want says it has them all. Data and the
// acknowledgments may come in either order (with a journal the ok waits
// for the log, and the feed may bring the message first).
func (c *codecClient) collect(want func(r *received) bool) *received {
	c.t.Helper()
	r := &received{data: map[string][]rtm.SubscriptionData{}, oks: map[int64]string{}}
	for !want(r) {
		env := c.recv()
		switch {
		case env.Action == rtm.ActionSubscriptionData:
			var d rtm.SubscriptionData
			if err := c.codec.DecodeBody(env.Body, &d); err != nil {
				c.t.Fatal(err)
			}
			r.data[d.SubscriptionID] = append(r.data[d.SubscriptionID], d)
		case env.Action == rtm.Reply(rtm.ActionPublish, rtm.OutcomeOK):
			var b rtm.PositionBody
			if err := c.codec.DecodeBody(env.Body, &b); err != nil {
				c.t.Fatal(err)
			}
			r.oks[env.ID.Int] = b.Position
		default:
			c.t.Fatalf("%s: unexpected %s %s", c.codec.Name(), env.Action, env.Body)
		}
	}
	return r
}

// messages counts the messages of a subscription's data PDUs.
func (r *received) messages(sub string) []any {
	var out []any
	for _, d := range r.data[sub] {
		out = append(out, d.Messages...)
	}
	return out
}

// checkExcludeSelf runs the exclude_self scenario: the publisher, on
// edge pe with codec pc, has two subscriptions to the channel (a plain
// one, and one with a view and value_changes, both batch 1); another
// connection, on edge oe with codec oc, the same two (so that on one edge
// the view's results are shared). The publisher's first message excludes
// it, the second does not.
func checkExcludeSelf(t *testing.T, pe, oe *edge, pc, oc codec.Codec) {
	t.Helper()
	pub := pe.dialCodec(t, pc)
	other := oe.dialCodec(t, oc)
	one := int64(1)
	pub.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", SubscriptionID: "plain", Batch: 1}, nil)
	pub.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", SubscriptionID: "view", Batch: 1,
		Filter: "SELECT * FROM room", Only: rtm.OnlyValueChanges}, nil)
	other.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", Batch: 1}, nil)
	other.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", SubscriptionID: "view", Batch: 1,
		Filter: "SELECT * FROM room", Only: rtm.OnlyValueChanges}, nil)

	pub.writeFrame(excludePublish(t, pc, 1))
	pub.send(&rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(2), Body: &rtm.PublishBody{Channel: "room", Message: everyone}})
	// The second message comes to each subscription after the first
	// would have: receiving it alone shows the first was skipped.
	got := pub.collect(func(r *received) bool {
		return len(r.oks) == 2 && len(r.messages("plain")) >= 1 && len(r.messages("view")) >= 1
	})
	p1, p2 := got.oks[1], got.oks[2]
	for _, sub := range []string{"plain", "view"} {
		ds := got.data[sub]
		if len(ds) != 1 || !reflect.DeepEqual(ds[0].Messages, []any{everyone}) || ds[0].Position != plus(t, p2, 1) {
			t.Errorf("publisher's %s subscription got %+v, want only \"everyone\" at %s", sub, ds, plus(t, p2, 1))
		}
	}
	// Everyone else gets both, in order, each at its own position.
	o := other.collect(func(r *received) bool { return len(r.messages("room")) >= 2 && len(r.messages("view")) >= 2 })
	for _, sub := range []string{"room", "view"} {
		if ds := o.data[sub]; len(ds) != 2 || !reflect.DeepEqual(ds[0].Messages, []any{mine}) || ds[0].Position != plus(t, p1, 1) ||
			!reflect.DeepEqual(ds[1].Messages, []any{everyone}) || ds[1].Position != plus(t, p2, 1) {
			t.Errorf("the other connection's %s subscription got %+v, want mine at %s, everyone at %s", sub, ds, plus(t, p1, 1), plus(t, p2, 1))
		}
	}

	// Resuming on the same connection from the excluded message's own
	// position: still excluded, the stream is the live one again.
	var sub rtm.SubscribeReply
	pub.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", SubscriptionID: "resume", Position: p1, Batch: 1}, &sub)
	if d := pub.data(); d.SubscriptionID != "resume" || !reflect.DeepEqual(d.Messages, []any{everyone}) || d.Position != plus(t, p2, 1) {
		t.Errorf("resume at %s on the publisher's connection: %+v, want everyone at %s", p1, d, plus(t, p2, 1))
	}
	// History returns everything: a read, and another connection's
	// resume (as the publisher's own after a reconnect).
	var rd rtm.ReadReply
	pub.call(rtm.ActionRead, &rtm.ReadBody{Channel: "room", Position: p1}, &rd)
	if !reflect.DeepEqual(rd.Message, mine) || rd.Position != p1 {
		t.Errorf("read at %s by the publisher: %+v, want mine", p1, rd)
	}
	later := pe.dialCodec(t, pc)
	later.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", Position: p1, History: &rtm.History{Count: &one}}, nil)
	var msgs []any
	for len(msgs) < 2 {
		msgs = append(msgs, later.data().Messages...)
	}
	if !reflect.DeepEqual(msgs, []any{mine, everyone}) {
		t.Errorf("a new connection resuming at %s got %v, want mine, everyone", p1, msgs)
	}
}

// TestExcludeSelf: rtm/publish with exclude_self reaches every
// subscriber but the publishing connection's own subscriptions, in JSON
// and msgpack, on an edge alone.
func TestExcludeSelf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		pc, oc codec.Codec
	}{
		{"json", json.Codec{}, json.Codec{}},
		{"msgpack", msgpack.Codec{}, msgpack.Codec{}},
		{"msgpack publisher, json other", msgpack.Codec{}, json.Codec{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := startEdge(t, nil)
			checkExcludeSelf(t, e, e, tc.pc, tc.oc)
		})
	}
}

// TestExcludeSelfJournal: the same on a durable edge (consumer-fed and
// sole writer), and across two edges of one log, where the other
// connection is on the other edge.
func TestExcludeSelfJournal(t *testing.T) {
	t.Parallel()
	t.Run("durable", func(t *testing.T) {
		t.Parallel()
		e := startJournalEdge(t, startNode(t), nil)
		checkExcludeSelf(t, e, e, json.Codec{}, msgpack.Codec{})
	})
	t.Run("sole writer", func(t *testing.T) {
		t.Parallel()
		e := startJournalEdge(t, startNode(t), &journal.Options{SoleWriter: true})
		checkExcludeSelf(t, e, e, msgpack.Codec{}, json.Codec{})
	})
	t.Run("two edges", func(t *testing.T) {
		t.Parallel()
		n := startNode(t)
		a, b := startJournalEdge(t, n, nil), startJournalEdge(t, n, nil)
		checkExcludeSelf(t, a, b, json.Codec{}, json.Codec{})
	})
}

// TestExcludeSelfBatch: in a batch, the excluded message is left out
// and the data position is still the one after the batch's last
// message, so a resume from it neither repeats nor skips anything.
func TestExcludeSelfBatch(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dialCodec(t, json.Codec{})
	// Published before the subscription, so that all three come in one
	// history batch; the excluded one last.
	pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "room", Message: "a"}, nil)
	pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "room", Message: "b"}, nil)
	pub.writeFrame(excludePublish(t, json.Codec{}, 3))
	var ok rtm.PositionBody
	if env := pub.recv(); env.Action != rtm.Reply(rtm.ActionPublish, rtm.OutcomeOK) {
		t.Fatalf("exclude_self publish: %s %s", env.Action, env.Body)
	} else if err := pub.codec.DecodeBody(env.Body, &ok); err != nil {
		t.Fatal(err)
	}
	three := int64(3)
	pub.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "room", History: &rtm.History{Count: &three}}, nil)
	d := pub.data()
	if !reflect.DeepEqual(d.Messages, []any{"a", "b"}) || d.Position != plus(t, ok.Position, 1) {
		t.Fatalf("history batch %+v, want a, b at %s (after the excluded message)", d, plus(t, ok.Position, 1))
	}
	// Nothing more is due: unsubscribing says where the subscription is.
	var un rtm.UnsubscribeReply
	pub.call(rtm.ActionUnsubscribe, &rtm.UnsubscribeBody{SubscriptionID: "room"}, &un)
	if un.Position != plus(t, ok.Position, 1) {
		t.Fatalf("unsubscribe/ok at %s, want %s", un.Position, plus(t, ok.Position, 1))
	}
}

// TestExcludeSelfWithOptions: exclude_self goes with Satori's options
// (read, and a write's compare-and-set, which a durable edge has the log
// check), and false is no exclusion; a value that is not a boolean is
// invalid_format. Another connection gets every message.
func TestExcludeSelfWithOptions(t *testing.T) {
	t.Parallel()
	eachEdge(t, testExcludeSelfWithOptions)
}

func testExcludeSelfWithOptions(t *testing.T, e *edge) {
	c := e.dial(t, "test", "")
	other := e.dial(t, "test", "")
	other.expectOK("rtm/subscribe", 1, map[string]any{"channel": "kv", "batch": 1})
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "kv", "batch": 1})
	c.expectOK("rtm/write", 2, map[string]any{"channel": "kv", "message": 1, "exclude_self": true, "read": "previous_message"})
	newest := c.expectOK("rtm/read", 3, map[string]any{"channel": "kv"})["position"].(string)
	c.expectOK("rtm/write", 4, map[string]any{"channel": "kv", "message": 2, "exclude_self": true, "position": newest})
	// Had message 1 or 2 been delivered, it would come first.
	if got := c.publishSubscribed(5, "kv", map[string]any{"channel": "kv", "message": 3, "exclude_self": false}); fmt.Sprint(got) != "3" {
		t.Fatalf("delivered %v, want 3 (exclude_self false excludes nobody; 1 and 2 excluded their publisher)", got)
	}
	for want := 1; want <= 3; want++ {
		p := other.recvWithin(10 * time.Second)
		if msgs, _ := p.Body["messages"].([]any); p.Action != "rtm/subscription/data" || len(msgs) != 1 || fmt.Sprint(msgs[0]) != itoa(want) {
			t.Fatalf("the other connection got %s %v, want message %d", p.Action, p.Body, want)
		}
	}
	c.expectError("rtm/publish", 6, map[string]any{"channel": "kv", "message": 4, "exclude_self": "yes"}, "invalid_format")
}

// TestExcludeSelfAggregate: an aggregate view of the publishing
// connection does not count its excluded messages (its history
// included); another connection's counts them all.
func TestExcludeSelfAggregate(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dial(t, "test", "")
	for i := 1; i <= 3; i++ {
		pub.expectOK("rtm/publish", i, map[string]any{"channel": "agg", "message": map[string]any{"k": i}, "exclude_self": i != 2})
	}
	count := func(c *rawClient) any {
		t.Helper()
		c.expectOK("rtm/subscribe", 10, map[string]any{"subscription_id": "n", "filter": "SELECT COUNT(*) AS n FROM agg",
			"history": map[string]any{"count": 3}})
		p := c.recvWithin(10 * time.Second)
		msgs, _ := p.Body["messages"].([]any)
		if p.Action != "rtm/subscription/data" || len(msgs) != 1 {
			t.Fatalf("aggregate: %s %v, want one result", p.Action, p.Body)
		}
		return msgs[0].(map[string]any)["n"]
	}
	if n := count(pub); fmt.Sprint(n) != "1" {
		t.Errorf("the publisher's count = %v, want 1 (two of three excluded it)", n)
	}
	if n := count(e.dial(t, "test", "")); fmt.Sprint(n) != "3" {
		t.Errorf("another connection's count = %v, want 3", n)
	}
}

// TestExcludeSelfCatchUp: on a durable edge, a resume of the publishing
// connection from before what the edge's memory holds reads the start
// from the log, whose copy of the message carries its origin too: still
// skipped there, and not for another connection.
func TestExcludeSelfCatchUp(t *testing.T) {
	t.Parallel()
	e := startJournalEdgeWith(t, startNode(t), nil, func(o *server.Options) {
		// A replica that keeps only the last few messages of a channel.
		o.StoreOptions.BlockBytes, o.StoreOptions.FirstBlockBytes, o.StoreOptions.ChannelBytes = 1024, 1024, 2048
	})
	pub := e.dial(t, "test", "")
	first := pub.expectOK("rtm/publish", 1, map[string]any{"channel": "log", "message": "mine", "exclude_self": true})["position"].(string)
	const fillers = 100
	for i := 1; i <= fillers; i++ {
		pub.expectOK("rtm/publish", 1+i, map[string]any{"channel": "log", "message": i})
	}
	for _, tc := range []struct {
		name  string
		c     *rawClient
		first string
	}{
		{"the publisher", pub, "1"},
		{"another connection", e.dial(t, "test", ""), "mine"},
	} {
		tc.c.expectOK("rtm/subscribe", 500, map[string]any{"channel": "log", "position": first})
		got := recvMessages(tc.c, "log", fillers, 30*time.Second)
		if fmt.Sprint(got[0]) != tc.first {
			t.Errorf("%s resuming at %s from the log: first message %v, want %s", tc.name, first, got[0], tc.first)
		}
	}
}

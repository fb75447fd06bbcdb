package server_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/store/storetest"
)

// TestChannelFloodBounded is the attack of issue 14 over loopback: a
// client publishing to 60,000 distinct channels of an edge whose
// store_bytes is 8 MiB. The edge's live heap must stay within a small
// multiple of that (it held a channel and a block per publish: 289 MiB
// for 200,000 in the store's own test, so about 87 MiB here), and a subscriber of another channel keeps
// getting its messages. Not parallel: it measures the process's heap.
func TestChannelFloodBounded(t *testing.T) {
	const (
		limit    = 8 << 20
		channels = 60_000
	)
	before := storetest.LiveHeap()
	e := startEdge(t, func(o *server.Options) {
		o.StoreOptions.StoreBytes = limit
		o.Limits.RequestsPerSecond = 1 << 20
		// The healthy subscriber reads nothing until the flood is over, so
		// it cannot answer pings: on a loaded machine the flood outlasts
		// the default 30 s interval and the edge would rightly drop it.
		o.Limits.PingInterval = time.Hour
		a := testApp()
		a.MaxChannels = -1 // the store limit alone bounds the flood
		o.Apps = []*app.App{a}
	})
	healthy := e.dial(t, "test", "")
	healthy.expectOK("rtm/subscribe", 1, map[string]any{"channel": "healthy"})
	attacker := e.dial(t, "test", "")
	attacker.pipeline("rtm/publish", channels, func(i int) map[string]any {
		return map[string]any{"channel": "flood." + itoa(i), "message": "0123456789012345678901234567890123456789"}
	})
	held := storetest.LiveHeap() - before
	st := e.srv.Store().Stats()
	t.Logf("%d channels published: live heap +%d KiB; the store counts %d KiB in %d channels (limit %d KiB)",
		channels, held>>10, st.Memory>>10, st.Channels, limit>>10)
	if held > 3*limit {
		t.Errorf("live heap grew by %d MiB for store_bytes of %d MiB", held>>20, limit>>20)
	}
	if st.Memory > limit+64<<10 {
		t.Errorf("the store counts %d bytes, past its %d", st.Memory, limit)
	}
	attacker.expectOK("rtm/publish", channels+1, map[string]any{"channel": "healthy", "message": "still here"})
	if msgs, _ := healthy.recvData("healthy", 1); msgs[0] != "still here" {
		t.Fatalf("the healthy subscriber got %v", msgs)
	}
}

// TestChannelQuota: past an app's max_channels a publish to a new channel
// is refused with channel_quota_exceeded and stores nothing, while its
// existing channels, and other apps, go on; once channels are forgotten
// their places are free again.
func TestChannelQuota(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		a, b := testApp(), testApp()
		a.MaxChannels = 3
		a.Channels = []app.ChannelRule{{Pattern: "*", Retention: store.Retention{TTL: time.Second, Grace: -1, HistoryCount: -1}}}
		b.Key = "other"
		o.Apps = []*app.App{a, b}
	})
	c := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "a"})
	for i, ch := range []string{"a", "b", "c"} {
		c.expectOK("rtm/publish", i+1, map[string]any{"channel": ch, "message": i})
	}
	for i, action := range []string{"rtm/publish", "rtm/write", "rtm/delete"} {
		body := c.expectError(action, 10+i, map[string]any{"channel": "d", "message": 1}, "channel_quota_exceeded")
		t.Logf("%s: %v", action, body["reason"])
	}
	if _, ok := e.srv.Store().Peek("test\x00d"); ok {
		t.Fatal("the refused publish created its channel")
	}
	c.expectOK("rtm/publish", 20, map[string]any{"channel": "a", "message": "again"})
	if msgs, _ := sub.recvData("a", 2); msgs[1] != "again" {
		t.Fatalf("subscriber of an existing channel got %v", msgs)
	}
	other := e.dial(t, "other", "")
	other.expectOK("rtm/publish", 1, map[string]any{"channel": "d", "message": 1})

	// b and c expire and are forgotten (a is kept by its subscriber).
	e.clock.Advance(2 * time.Second)
	e.srv.Store().Sweep()
	c.expectOK("rtm/publish", 30, map[string]any{"channel": "d", "message": 1})
	c.expectOK("rtm/publish", 31, map[string]any{"channel": "e", "message": 1})
	c.expectError("rtm/publish", 32, map[string]any{"channel": "f", "message": 1}, "channel_quota_exceeded")
}

// TestChannelQuotaJournal: with a journal the limit is checked before the
// log stores a publish, and the feed's appends, which the log already
// stored, are never refused: the edge's own publish to a new channel
// (which bypasses the limit) reaches the replica past it.
func TestChannelQuotaJournal(t *testing.T) {
	e := startJournalEdgeWith(t, startNode(t), nil, func(o *server.Options) {
		a := testApp()
		a.MaxChannels = 2
		o.Apps = []*app.App{a}
	})
	c := e.dial(t, "test", "")
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": 1})
	c.expectOK("rtm/publish", 2, map[string]any{"channel": "b", "message": 2})
	c.expectError("rtm/publish", 3, map[string]any{"channel": "c", "message": 3}, "channel_quota_exceeded")
	c.expectOK("rtm/publish", 4, map[string]any{"channel": "a", "message": 4})
	if r := c.expectOK("rtm/read", 5, map[string]any{"channel": "c"}); r["message"] != nil {
		t.Fatalf("the refused publish was stored: %v", r)
	}
	if _, err := e.srv.Publish("test", "fed", "from the edge"); err != nil {
		t.Fatalf("Publish past the limit: %v", err)
	}
	if r := c.expectOK("rtm/read", 6, map[string]any{"channel": "fed"}); r["message"] != "from the edge" {
		t.Fatalf("the feed did not store the edge's publish past the limit: %v", r)
	}
	if n := e.srv.Store().Channels("test"); n != 3 {
		t.Fatalf("the replica holds %d channels of the app, want 3", n)
	}
}

package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
)

// TestJournalStalledSubscriberReadsOn: a durable edge's store is a cache
// of its log. A subscriber that stops reading while a channel floods
// past the store's bound (channel_bytes here, store_bytes alike), which
// an edge in memory ends with out_of_sync (TestSlowConsumer), reads on
// from the log once it reads again: every message once, in order, with
// or without fast_forward, and the edge counts the resume. On each feed
// a durable edge runs: a sole writer's, every message's, interest's; and
// for a channel read by a prefix subscription, whose child resumes alone.
func TestJournalStalledSubscriberReadsOn(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		opts        journal.Options
		fastForward bool
		prefix      bool
	}{
		{"sole writer", journal.Options{SoleWriter: true}, false, false},
		{"interest", journal.Options{Interest: true}, false, false},
		{"all, fast_forward", journal.Options{}, true, false},
		{"sole writer, prefix", journal.Options{SoleWriter: true}, false, true},
		{"interest, prefix, fast_forward", journal.Options{Interest: true}, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testStalledReadsOn(t, &tt.opts, stalledSub(tt.fastForward, tt.prefix))
		})
	}
}

func testStalledReadsOn(t *testing.T, jopts *journal.Options, sub map[string]any) {
	e, slow := stalledSubscriber(t, startNode(t), jopts, sub)
	const n = floodMessages
	var slowRead atomic.Int64
	if err := readSequence(slow, sub["channel"].(string), n, &slowRead); err != nil {
		t.Fatalf("stalled subscriber, after %d messages: %v", slowRead.Load(), err)
	}
	if st := e.srv.Stats(); st.LogResumes == 0 || st.OutOfSync != 0 || st.FastForward != 0 {
		t.Fatalf("log resumes %d, out of sync %d, fast forwards %d: the test did not stall the subscriber past the store, or it was not resumed",
			st.LogResumes, st.OutOfSync, st.FastForward)
	}
}

// floodMessages are what stalledSubscriber publishes: as in
// testSlowConsumer, 12 MB, more than loopback's socket buffers and the
// channel's bound (1 MiB) together.
const floodMessages = 3000

// stalledSub is the body of stalledSubscriber's subscribe: to "flood",
// or to the prefix "flo", of which "flood" is a child (made by the flood,
// after the subscribe). Its channel is its subscription's id.
func stalledSub(fastForward, prefix bool) map[string]any {
	if prefix {
		return map[string]any{"channel": "flo", "prefix": true, "fast_forward": fastForward}
	}
	return map[string]any{"channel": "flood", "fast_forward": fastForward}
}

// stalledSubscriber starts an edge on n whose channels hold 1 MiB, and
// floods the channel "flood" with floodMessages {"i": k, "pad": ...}
// while the returned client, subscribed with sub (stalledSub), reads
// nothing. It returns once the log acknowledged the last message,
// having stored every one.
func stalledSubscriber(t *testing.T, n *journal.Node, jopts *journal.Options, sub map[string]any) (*edge, *rawClient) {
	t.Helper()
	e := startJournalEdgeWith(t, n, jopts, func(o *server.Options) {
		o.StoreOptions.ChannelBytes = 1 << 20
		o.StoreOptions.BlockBytes = 64 << 10
		o.Limits.RequestsPerSecond = 1 << 30
		o.Limits.WriteTimeout = time.Minute
		o.Limits.PingInterval = time.Hour // as in testSlowConsumer
	})
	slow := e.dial(t, "test", "")
	slow.expectOK("rtm/subscribe", 1, sub)
	pub := e.dial(t, "test", "")
	pad := strings.Repeat("p", 4000)
	for i := 0; i < floodMessages-1; i++ {
		pub.send("rtm/publish", nil, map[string]any{"channel": "flood", "message": map[string]any{"i": i, "pad": pad}})
	}
	pub.expectOK("rtm/publish", 2, map[string]any{"channel": "flood", "message": map[string]any{"i": floodMessages - 1, "pad": pad}})
	return e, slow
}

// TestJournalCountsChannelsInTheLog: a durable edge's store lets go of
// channels past its bound (store_bytes), which the log still holds: the
// app's channel limit and the server API's channel list count the log's,
// not the store's (before, a store that let go of two of three channels
// admitted a fourth past max_channels 3, and listed one).
func TestJournalCountsChannelsInTheLog(t *testing.T) {
	t.Parallel()
	e := startJournalEdgeWith(t, startNode(t), &journal.Options{SoleWriter: true}, func(o *server.Options) {
		a := testApp()
		a.MaxChannels = 3
		o.Apps = []*app.App{a}
		o.StoreOptions.StoreBytes = 256 << 10
		o.StoreOptions.BlockBytes = 16 << 10
		o.Limits.RequestsPerSecond = 1 << 30
	})
	c := e.dial(t, "test", "")
	for i, ch := range []string{"a", "b", "c"} {
		c.expectOK("rtm/publish", i+1, map[string]any{"channel": ch, "message": i})
	}
	pad := strings.Repeat("p", 4000)
	for i := 0; e.srv.Store().Channels("test") == 3; i++ {
		if i == 1000 {
			t.Fatalf("the store still holds every channel after 4 MB: the test cannot show the log counted")
		}
		c.expectOK("rtm/publish", 10+i, map[string]any{"channel": "c", "message": pad})
	}
	c.expectError("rtm/publish", 2000, map[string]any{"channel": "d", "message": 1}, "channel_quota_exceeded")
	c.expectOK("rtm/publish", 2001, map[string]any{"channel": "a", "message": "again"})
	// The log's list is at most a second old (journal.countEvery).
	for deadline := time.Now().Add(10 * time.Second); ; {
		names, more, err := e.srv.BackendChannels(context.Background(), "test", "", "", 10)
		if err == nil && !more && slices.Equal(names, []string{"a", "b", "c"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("channels %v (more %v, err %v), want [a b c]", names, more, err)
		}
		time.Sleep(50 * time.Millisecond) // poll the log's list
	}
}

// TestJournalStalledSubscriberLogDown: a subscriber further behind than
// the store while the log cannot be read is not skipped ahead nor told
// its messages expired (the log keeps them): its subscription ends
// "unavailable" at the first message it did not get, where the client
// resubscribes.
func TestJournalStalledSubscriberLogDown(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	e, slow := stalledSubscriber(t, n, &journal.Options{SoleWriter: true, PublishTimeout: time.Second}, stalledSub(true, false))
	const n0 = floodMessages
	n.Close()
	var got atomic.Int64
	err := readSequence(slow, "flood", n0, &got)
	if err == nil || !strings.Contains(err.Error(), `"error":"unavailable"`) {
		t.Fatalf("stalled subscriber with the log down, after %d messages: %v; want unavailable", got.Load(), err)
	}
	// The stream holds this channel alone, from offset 1: message i is
	// at offset i+1, and the next the subscriber did not get at got+1.
	if want := fmt.Sprintf(`:%d","subscription_id"`, got.Load()+1); !strings.Contains(err.Error(), want) {
		t.Fatalf("after %d messages: %v; want the position of the next, ...%s", got.Load(), err, want)
	}
	if st := e.srv.Stats(); st.FastForward != 0 || st.OutOfSync != 0 {
		t.Fatalf("fast forwards %d, out of sync %d: the subscriber lost what the log keeps", st.FastForward, st.OutOfSync)
	}
}

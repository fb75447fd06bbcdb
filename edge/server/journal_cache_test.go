package server_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
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
	e, slow, f := stalledSubscriber(t, startNode(t), jopts, sub)
	var slowRead atomic.Int64
	if err := readAcked(slow, sub["channel"].(string), f, &slowRead); err != nil {
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
// floods the channel "flood" (flood) while the returned client,
// subscribed with sub (stalledSub), reads nothing. It returns once the
// log answered every publish, with those it acknowledged.
func stalledSubscriber(t *testing.T, n *journal.Node, jopts *journal.Options, sub map[string]any) (*edge, *rawClient, flooded) {
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
	return e, slow, flood(t, e.dial(t, "test", ""))
}

// flooded is what the log answered the flood: the publishes it
// acknowledged, in the order of their offsets, and the k of those it
// said it did not store, and will not (none may be delivered).
type flooded struct {
	acked   []floodAck
	refused map[int]bool
}

// floodAck is a publish of the flood the log acknowledged: its message's
// k and offset.
type floodAck struct {
	i      int
	offset uint64
}

// offsetBefore is the offset of acked[m-1], 0 for m = 0.
func offsetBefore(acked []floodAck, m int) uint64 {
	if m == 0 {
		return 0
	}
	return acked[m-1].offset
}

// floodID is the id of the flood's first publish.
const floodID = 100

// flood publishes floodMessages {"i": k, "pad": ...} to "flood" on pub,
// each with an id, and returns those the log acknowledged, in the order
// of their offsets (a publish sent again may be stored after a later
// one, journal's publish.go). A
// machine starved enough (a publish answered past AckWait) may have the
// log answer some unavailable, refused or their fate unknown (readAcked).
// The replies are read as they come: 3,000 of them would fill the socket.
func flood(t *testing.T, pub *rawClient) flooded {
	t.Helper()
	f := flooded{refused: make(map[int]bool)}
	replies := make(chan error, 1)
	go func() { replies <- readFloodReplies(pub, &f) }()
	pad := strings.Repeat("p", 4000)
	for i := range floodMessages {
		// The edge takes a publish once the log has room for it (256 in
		// flight a connection): a loaded machine with the race detector
		// may hold a write past sendText's 5 s.
		pub.sendTextWithin(time.Minute, string(pduJSON(t, "rtm/publish", floodID+i,
			map[string]any{"channel": "flood", "message": map[string]any{"i": i, "pad": pad}})))
	}
	if err := <-replies; err != nil {
		t.Fatalf("the flood's replies: %v", err)
	}
	slices.SortFunc(f.acked, func(a, b floodAck) int { return cmp.Compare(a.offset, b.offset) })
	return f
}

// readFloodReplies reads the replies of the flood's publishes on c into
// f.
func readFloodReplies(c *rawClient, f *flooded) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // bounds a hang
	defer cancel()
	for k := range floodMessages {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return fmt.Errorf("reply %d: %w", k, err)
		}
		var p pdu
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			return fmt.Errorf("reply %d: %w", k, err)
		}
		switch id, _ := p.ID.(json.Number); {
		case id.String() != strconv.Itoa(floodID+k):
			return fmt.Errorf("reply %s, want id %d", data, floodID+k)
		case p.Action == "rtm/publish/ok":
			pos, _ := p.Body["position"].(string)
			off, err := strconv.ParseUint(pos[strings.LastIndexByte(pos, ':')+1:], 10, 64)
			if err != nil {
				return fmt.Errorf("publish %d acknowledged at %q: %w", k, pos, err)
			}
			f.acked = append(f.acked, floodAck{i: k, offset: off})
		case p.Action != "rtm/publish/error" || p.Body["error"] != "unavailable":
			return fmt.Errorf("publish %d: %s", k, data)
		case strings.Contains(fmt.Sprint(p.Body["reason"]), "will not"):
			f.refused[k] = true // else its fate is unknown
		}
	}
	return nil
}

// readAcked reads a subscription until it has every message f.acked
// holds, in the order of their offsets and each once. Others may come,
// each once: publishes the edge answered unavailable, their fate
// unknown, which may have been stored, anywhere among the rest
// (journal's publish.go: a send again after a timeout); never one it
// said it did not store. Progress is how many of f.acked it read.
func readAcked(c *rawClient, sub string, f flooded, progress *atomic.Int64) error {
	acked := f.acked
	if len(acked) == 0 {
		return errors.New("the log acknowledged none of the flood")
	}
	isAcked := make(map[int]bool, len(acked))
	for _, a := range acked {
		isAcked[a.i] = true
	}
	seen := make(map[int]bool, len(acked))
	m := 0
	return readEach(c, sub, func(k int) (bool, error) {
		switch {
		case seen[k]:
			return false, fmt.Errorf("got message %d twice", k)
		case f.refused[k]:
			return false, fmt.Errorf("got message %d, which the log said it did not store", k)
		case isAcked[k] && k != acked[m].i:
			return false, fmt.Errorf("got message %d where %d was stored, at offset %d", k, acked[m].i, acked[m].offset)
		case isAcked[k]:
			m++
			progress.Store(int64(m))
		}
		seen[k] = true
		return m == len(acked), nil
	})
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
	e, slow, f := stalledSubscriber(t, n, &journal.Options{SoleWriter: true, PublishTimeout: time.Second}, stalledSub(true, false))
	acked := f.acked
	n.Close()
	var got atomic.Int64
	err := readAcked(slow, "flood", f, &got)
	if err == nil || !strings.Contains(err.Error(), `"error":"unavailable"`) {
		t.Fatalf("stalled subscriber with the log down, after %d messages: %v; want unavailable", got.Load(), err)
	}
	// The position of the next message the subscriber did not get: at
	// most the next acknowledged one's, past the last it read.
	m := int(got.Load())
	pos := regexp.MustCompile(`"position":"\d+:(\d+)"`).FindStringSubmatch(err.Error())
	var at uint64
	if pos != nil {
		at, _ = strconv.ParseUint(pos[1], 10, 64)
	}
	if at == 0 || at > acked[m].offset || m > 0 && at <= acked[m-1].offset {
		t.Fatalf("after %d acknowledged messages: %v; want the position of the next, in (%d, %d]", m, err, offsetBefore(acked, m), acked[m].offset)
	}
	if st := e.srv.Stats(); st.FastForward != 0 || st.OutOfSync != 0 {
		t.Fatalf("fast forwards %d, out of sync %d: the subscriber lost what the log keeps", st.FastForward, st.OutOfSync)
	}
}

// TestJournalStalledPrefixWaitsForTheLog: a channel of a prefix
// subscription further behind than the store while the log cannot be
// read waits and reads the log again, instead of ending the whole prefix
// subscription "unavailable" (its client could subscribe again only from
// now, and would miss its other channels' messages meanwhile): once the
// log is back, the channel reads on, every acknowledged message once and
// in order, and the prefix subscription lives on. The channel is one the
// prefix matches, or the prefix's own.
func TestJournalStalledPrefixWaitsForTheLog(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		sub  map[string]any
	}{
		{"a channel it matches", stalledSub(false, true)},
		{"its own channel", map[string]any{"channel": "flood", "prefix": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testStalledPrefixWaits(t, tt.sub)
		})
	}
}

func testStalledPrefixWaits(t *testing.T, sub map[string]any) {
	start := restartableNode(t)
	n := start()
	e, slow, f := stalledSubscriber(t, n, &journal.Options{SoleWriter: true, PublishTimeout: time.Second}, sub)
	n.Close()
	id := sub["channel"].(string)
	var got atomic.Int64
	read := make(chan error, 1)
	go func() { read <- readAcked(slow, id, f, &got) }()
	// Twice: the channel did not give up after its first failure.
	poll.Until(t, "the channel reads the log again after it failed", func() bool { return e.srv.Stats().LogRetries >= 2 })
	start() // the same files and port: the edge's connection comes back
	if err := <-read; err != nil {
		t.Fatalf("stalled prefix subscriber across the log's outage, after %d messages: %v", got.Load(), err)
	}
	if st := e.srv.Stats(); st.LogResumes == 0 || st.OutOfSync != 0 || st.FastForward != 0 {
		t.Fatalf("log resumes %d, out of sync %d, fast forwards %d: want the channel resumed from the log, nothing skipped",
			st.LogResumes, st.OutOfSync, st.FastForward)
	}
	last := floodMessages + 1
	e.dial(t, "test", "").expectOK("rtm/publish", 1, map[string]any{"channel": "flood", "message": map[string]any{"i": last}})
	if err := readEach(slow, id, func(k int) (bool, error) { return k == last, nil }); err != nil {
		t.Fatalf("the prefix subscription after the outage: %v", err)
	}
}

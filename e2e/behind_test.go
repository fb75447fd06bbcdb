package e2e

// Subscribers that fall behind: on the network (the edge's writer blocks
// while the channel's blocks are evicted under it) and in their handlers
// (the client's delivery buffer overflows).

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// smallChannels gives an edge channels of 64 KiB in 4 KiB blocks, so a few
// hundred kilobytes published evict the oldest messages, and lets a
// stalled connection wait instead of being closed for it.
func smallChannels(o *server.Options) {
	o.StoreOptions.ChannelBytes = 64 << 10
	o.StoreOptions.BlockBytes = 4 << 10
	o.Limits.WriteTimeout = time.Minute
	o.Limits.RequestsPerSecond = 1 << 20
}

// floodPad makes a flood message about 1 KB.
var floodPad = strings.Repeat("p", 1000)

// flood publishes {"i": from..to, "pad": ...}, each acknowledged, and
// returns their positions.
func flood(t *testing.T, c *client.Client, channel string, from, to int) []rtm.Position {
	t.Helper()
	var out []rtm.Position
	for i := from; i <= to; i++ {
		pos, err := c.Publish(ctxFor(t), channel, map[string]any{"i": i, "pad": floodPad})
		if err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
		out = append(out, pos)
	}
	return out
}

// timeline records the callbacks of a flood subscription in the order
// they ran: each message's "i", and the OnInfo and OnError calls.
type timeline struct {
	mu     sync.Mutex
	events []event
	seen   []int64 // the "i" of each message
}

// event is one callback: a message, a notice or an error.
type event struct {
	msg  int64 // the message's "i"; -1 for OnInfo and OnError
	info *rtm.SubscriptionInfo
	err  error
}

func (ev event) String() string {
	switch {
	case ev.info != nil:
		return fmt.Sprintf("info(%d missed)", ev.info.MissedMessageCount)
	case ev.err != nil:
		return "error"
	}
	return fmt.Sprint(ev.msg)
}

func (l *timeline) add(ev event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	if ev.msg >= 0 {
		l.seen = append(l.seen, ev.msg)
	}
}

func (l *timeline) handle(m client.Message) {
	i, _ := m.Value.(map[string]any)["i"].(int64)
	l.add(event{msg: i})
}

func (l *timeline) onInfo(info rtm.SubscriptionInfo) { l.add(event{msg: -1, info: &info}) }
func (l *timeline) onError(err error)                { l.add(event{msg: -1, err: err}) }

func (l *timeline) get() (events []event, seen []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events), slices.Clone(l.seen)
}

// gaps returns the indexes in seen where the sequence does not go up by
// one, after checking that it starts at 0.
func gaps(t *testing.T, seen []int64) []int {
	t.Helper()
	if len(seen) > 0 && seen[0] != 0 {
		t.Fatalf("first message %d, want 0", seen[0])
	}
	var out []int
	for k := 1; k < len(seen); k++ {
		if seen[k] != seen[k-1]+1 {
			out = append(out, k)
		}
	}
	return out
}

// stalled is a subscriber whose network stalled while its channel was
// flooded.
type stalled struct {
	c         *client.Client
	sub       *client.Subscription
	px        *proxy
	positions []rtm.Position // of the flood messages 0..400
}

// stalledSubscriber subscribes through a proxy, then stalls the network
// and floods the channel until the subscriber's unread messages are
// evicted, then lets the network go.
func stalledSubscriber(t *testing.T, opts *client.SubscribeOptions, tl *timeline) *stalled {
	t.Helper()
	e := startEdgeWith(t, edgeConfig{mutate: smallChannels, sendBuffer: 4 << 10})
	px := newStallingProxy(t, e.hostPort())
	sub := dial(t, px.url(), client.Options{})
	pub := publisher(t, e.url, "msgpack")
	s, err := sub.Subscribe(ctxFor(t), "flood", opts, tl.handle)
	if err != nil {
		t.Fatal(err)
	}
	positions := flood(t, pub, "flood", 0, 0)
	poll.Until(t, "the first message", func() bool { _, seen := tl.get(); return len(seen) == 1 })
	px.stall()
	// Kernel buffers of a few KB plus a 64 KB batch in flight, then 64 KB
	// of channel: 400 KB leaves no doubt the unread part was evicted.
	positions = append(positions, flood(t, pub, "flood", 1, 400)...)
	if st := e.srv.Store().Stats(); st.EvictedBlocks == 0 {
		t.Fatalf("no block evicted after flooding: %+v", st)
	}
	px.unstall()
	return &stalled{c: sub, sub: s, px: px, positions: positions}
}

func TestOutOfSyncReachesOnError(t *testing.T) {
	t.Parallel()
	var tl timeline
	errs := make(chan error, 1)
	opts := &client.SubscribeOptions{OnError: func(err error) { tl.onError(err); errs <- err }}
	st := stalledSubscriber(t, opts, &tl)
	s := st.sub
	err := poll.Recv(t, "OnError", errs)
	re, ok := rtm.AsError(err)
	if !ok || re.Code != rtm.CodeOutOfSync || re.SubscriptionID != "flood" || re.Reason == "" {
		t.Fatalf("OnError(%v), want out_of_sync for flood with a reason", err)
	}
	<-s.Done()
	if s.Err() != err {
		t.Errorf("Err() = %v, want the error given to OnError", s.Err())
	}
	events, seen := tl.get()
	if g := gaps(t, seen); len(g) != 0 || len(seen) >= 401 {
		t.Fatalf("received %d messages with gaps at %v, want a gapless prefix", len(seen), g)
	}
	if events[len(events)-1].err == nil {
		t.Errorf("OnError came before messages: %v", events[max(len(events)-5, 0):])
	}
	// The error names the first message the subscriber missed.
	if want := st.positions[len(seen)].String(); re.Position != want {
		t.Errorf("out_of_sync at %q after %d messages, want %s", re.Position, len(seen), want)
	}
	if st.px.accepted() != 1 {
		t.Errorf("%d connections, want the subscription ended without a reconnection", st.px.accepted())
	}
	// The id is free again, here and on the edge.
	var again inbox
	if _, err := st.c.Subscribe(ctxFor(t), "flood", &client.SubscribeOptions{Position: &st.positions[400]}, again.handle); err != nil {
		t.Fatalf("Subscribe after out_of_sync: %v", err)
	}
	poll.Until(t, "the newest message again", func() bool { return len(again.get()) == 1 })
}

func TestFastForwardReachesOnInfo(t *testing.T) {
	t.Parallel()
	var tl timeline
	infos := make(chan rtm.SubscriptionInfo, 100)
	opts := &client.SubscribeOptions{
		FastForward: true,
		OnInfo:      func(info rtm.SubscriptionInfo) { tl.onInfo(info); infos <- info },
		OnError:     func(err error) { t.Errorf("OnError(%v) with fast_forward", err) },
	}
	st := stalledSubscriber(t, opts, &tl)
	s, last := st.sub, st.positions[400]
	info := poll.Recv(t, "OnInfo", infos)
	if info.Info != rtm.InfoFastForward || info.SubscriptionID != "flood" || info.MissedMessageCount == 0 || info.Reason == "" {
		t.Fatalf("OnInfo(%+v), want fast_forward for flood with missed messages and a reason", info)
	}
	poll.Until(t, "the last message", func() bool { _, seen := tl.get(); return len(seen) > 0 && seen[len(seen)-1] == 400 })
	// Every gap is announced, in order, by notices counting it exactly.
	events, _ := tl.get()
	prev, missed := int64(-1), uint64(0)
	for _, ev := range events {
		switch {
		case ev.info != nil:
			missed += ev.info.MissedMessageCount
		case ev.msg >= 0:
			if want := prev + 1 + int64(missed); ev.msg != want {
				t.Fatalf("message %d after %d and notices of %d missed, want %d: %v", ev.msg, prev, missed, want, events)
			}
			prev, missed = ev.msg, 0
		}
	}
	poll.Until(t, "the position to pass the last message", func() bool { return s.Position() == last.Next() })
	if s.Err() != nil {
		t.Errorf("subscription ended: %v", s.Err())
	}
}

// blockedHandler returns a handler that blocks on its first message until
// release is closed, and the channel closed when it starts blocking.
func blockedHandler(tl *timeline, release <-chan struct{}) (func(client.Message), <-chan struct{}) {
	stuck := make(chan struct{})
	var once sync.Once
	return func(m client.Message) {
		once.Do(func() {
			close(stuck)
			<-release
		})
		tl.handle(m)
	}, stuck
}

func TestSlowHandlerDoesNotBlockReplies(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	var logs logRecorder
	var states stateLog
	// A buffer of less than one message: the handler falls behind at once.
	c := dial(t, px.url(), client.Options{Role: "publisher", RoleSecret: pubSecret,
		DeliveryBufferBytes: 300, Logger: logs.logger(), OnState: states.on})
	pub := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)
	release := make(chan struct{})
	var tl timeline
	handler, stuck := blockedHandler(&tl, release)
	sub, err := c.Subscribe(ctx, "firehose", nil, handler)
	if err != nil {
		t.Fatal(err)
	}
	flood(t, pub, "firehose", 0, 0)
	poll.Recv(t, "the handler to block", stuck)
	const n = 150 // 150 KB: more than one 64 KB batch of the edge
	flood(t, pub, "firehose", 1, n)
	poll.Until(t, "the subscription to be paused", func() bool { return logs.contains("subscription paused") })
	// The handler is stuck, yet the client's own requests are answered.
	if _, err := c.Publish(ctx, "other", "still served"); err != nil {
		t.Fatalf("Publish while the handler is stuck: %v", err)
	}
	if _, _, err := c.Read(ctx, "firehose"); err != nil {
		t.Fatalf("Read while the handler is stuck: %v", err)
	}
	close(release)
	poll.Until(t, "every message", func() bool { _, seen := tl.get(); return len(seen) >= n+1 })
	last := flood(t, pub, "firehose", n+1, n+1)[0]
	poll.Until(t, "the message after the pause", func() bool { _, seen := tl.get(); return len(seen) >= n+2 })
	_, seen := tl.get()
	if g := gaps(t, seen); len(g) != 0 || len(seen) != n+2 {
		t.Fatalf("received %d messages with gaps at %v, want 0..%d once each", len(seen), g, n+1)
	}
	poll.Until(t, "the position to pass the last message", func() bool { return sub.Position() == last.Next() })
	if px.accepted() != 1 || len(states.get()) != 2 {
		t.Errorf("%d connections, states %v: want the pause handled on one connection", px.accepted(), states.get())
	}
}

// TestSlowHandlerPastRetention: a handler slower than the channel's
// retention ends with expired_position, as documented, whichever comes
// first once the client paused the subscription: its unsubscribe, or the
// edge finding its own read point evicted (out_of_sync, which concerns
// data the client dropped; the client resubscribes from its position
// and the edge answers for that one).
func TestSlowHandlerPastRetention(t *testing.T) {
	t.Parallel()
	e := startEdgeWith(t, edgeConfig{mutate: smallChannels})
	var logs logRecorder
	c := dial(t, e.url, client.Options{DeliveryBufferBytes: 300, Logger: logs.logger()})
	pub := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)
	release := make(chan struct{})
	var tl timeline
	handler, stuck := blockedHandler(&tl, release)
	errs := make(chan error, 1)
	// One message per data PDU, so that two of them overflow the
	// client's buffer.
	s, err := c.Subscribe(ctx, "flood", &client.SubscribeOptions{Batch: 1, OnError: func(err error) { errs <- err }}, handler)
	if err != nil {
		t.Fatal(err)
	}
	flood(t, pub, "flood", 0, 0)
	poll.Recv(t, "the handler to block", stuck)
	// Two messages, far from the channel's 64 KiB, overflow the
	// client's buffer (the first fills it, the second overflows it):
	// the subscription is paused before anything is evicted. Were the
	// edge slow enough to find its read point evicted before the client
	// paused, the subscription would be out of sync on the edge, not
	// behind in its handler: out_of_sync.
	flood(t, pub, "flood", 1, 2)
	poll.Until(t, "the subscription to be paused", func() bool { return logs.contains("subscription paused") })
	flood(t, pub, "flood", 3, 300) // the unread messages are evicted meanwhile
	close(release)
	err = poll.Recv(t, "OnError", errs)
	if re, ok := rtm.AsError(err); !ok || re.Code != rtm.CodeExpiredPosition || re.SubscriptionID != "flood" {
		t.Fatalf("OnError(%v), want expired_position for flood", err)
	}
	<-s.Done()
	_, seen := tl.get()
	if g := gaps(t, seen); len(g) != 0 || len(seen) > 100 {
		t.Fatalf("received %d messages with gaps at %v, want a short gapless prefix", len(seen), g)
	}
	if c.State() != client.Connected {
		t.Errorf("State() = %v, want the client still connected", c.State())
	}
}

package e2e

// Gaps: after a reconnect whose position the edge no longer has, the Go
// client carries on from the oldest message the edge holds and says so
// (OnGap), unless the subscription is Strict (see resume_test.go).

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// gapLog records, in the order the delivery goroutine ran them, a
// subscription's messages and gaps, and its errors.
type gapLog struct {
	mu     sync.Mutex
	events []string // "msg:V" or "gap"
	gaps   []client.Gap
	errs   []error
}

func (l *gapLog) message(m client.Message) {
	l.mu.Lock()
	l.events = append(l.events, fmt.Sprint("msg:", m.Value))
	l.mu.Unlock()
}

func (l *gapLog) gap(g client.Gap) {
	l.mu.Lock()
	l.events = append(l.events, "gap")
	l.gaps = append(l.gaps, g)
	l.mu.Unlock()
}

func (l *gapLog) err(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
}

func (l *gapLog) get() (events []string, gaps []client.Gap, errs []error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events), slices.Clone(l.gaps), slices.Clone(l.errs)
}

// options are SubscribeOptions reporting to l.
func (l *gapLog) options(direct bool) *client.SubscribeOptions {
	return &client.SubscribeOptions{OnGap: l.gap, OnError: l.err, Direct: direct}
}

// TestResumeGapCarriesOn: the connection stays down until the messages
// after the subscriber's position have expired. By default the client
// subscribes again from the oldest message the edge has, reports the gap
// (from the position it asked for to where it resumed) before the next
// message, and the subscription stays live.
func TestResumeGapCarriesOn(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	sub := dial(t, px.url(), client.Options{})
	pub := publisher(t, e.url, "json")
	ctx := ctxFor(t)
	var l gapLog
	s, err := sub.Subscribe(ctx, "short.gap", l.options(false), l.message)
	if err != nil {
		t.Fatal(err)
	}
	// The position moves past a message once its handler has returned,
	// after the log has it: wait for the position, not the log.
	asked := publishRange(t, pub, "short.gap", 1, 1).Next()
	poll.Until(t, "the position to pass message 1", func() bool { return s.Position() == asked })
	px.refuse(true)
	px.cut()
	publishRange(t, pub, "short.gap", 2, 3) // never read by the subscriber, then gone
	e.expire(shortTTL + shortGrace + time.Second)
	px.refuse(false)
	poll.Until(t, "the gap", func() bool { _, g, _ := l.get(); return len(g) == 1 })
	last := publishRange(t, pub, "short.gap", 4, 4)
	poll.Until(t, "the position to pass message 4", func() bool { return s.Position() == last.Next() })

	events, gaps, errs := l.get()
	if want := []string{"msg:1", "gap", "msg:4"}; !slices.Equal(events, want) || len(errs) != 0 {
		t.Fatalf("events %v, errors %v; want %v and no error", events, errs, want)
	}
	g := gaps[0]
	if g.SubscriptionID != "short.gap" || g.Channel != "short.gap" || g.Requested != asked || g.Reason == "" {
		t.Errorf("gap %+v: want short.gap, from %v, with a reason", g, asked)
	}
	// Nothing was left of 2 and 3 (nor of the channel, forgotten once
	// empty: message 4 made a new one): the subscription resumed at the
	// oldest message the edge had then, at most message 4's slot.
	if g.Resumed == asked || g.Resumed.Epoch != last.Epoch || g.Resumed.Offset > last.Offset {
		t.Errorf("resumed at %v, want another slot than %v, at most %v (message 4)", g.Resumed, asked, last)
	}
	if s.Err() != nil {
		t.Errorf("subscription ended: %v; want live after message 4", s.Err())
	}
}

// TestEdgeRestartGap restarts the edge (a process, killed and started
// again: in-memory, so a new epoch and no history) under a client behind
// a proxy. Its subscriptions, queued and Direct, carry on on the new edge
// with a gap from the old edge's position, and get what is published
// there.
func TestEdgeRestartGap(t *testing.T) {
	t.Parallel()
	a := startEdgeProcess(t)
	px := newProxy(t, strings.TrimPrefix(a.url, "ws://"))
	var states stateLog
	c := dial(t, px.url(), client.Options{AppKey: a.appkey, OnState: states.on})
	ctx := ctxFor(t)
	logs := map[string]*gapLog{"restart.queued": {}, "restart.direct": {}}
	subs := map[string]*client.Subscription{}
	for ch, l := range logs {
		s, err := c.Subscribe(ctx, ch, l.options(ch == "restart.direct"), l.message)
		if err != nil {
			t.Fatal(err)
		}
		subs[ch] = s
	}
	onA := dial(t, a.url, client.Options{AppKey: a.appkey})
	// What each subscription will ask the new edge for: the position
	// after the message, which it takes once the handler has returned.
	asked := map[string]rtm.Position{}
	for ch, s := range subs {
		p, err := onA.Publish(ctx, ch, "before")
		if err != nil {
			t.Fatal(err)
		}
		asked[ch] = p.Next()
		poll.Until(t, ch+" to pass the message before the restart", func() bool { return s.Position() == asked[ch] })
	}

	a.kill()
	b := startEdgeProcess(t)
	px.retarget(strings.TrimPrefix(b.url, "ws://"))
	px.cut() // what the kill left half-open, if anything
	for ch, l := range logs {
		poll.Until(t, ch+"'s gap", func() bool { _, g, _ := l.get(); return len(g) == 1 })
	}
	onB := dial(t, b.url, client.Options{AppKey: b.appkey})
	for ch, l := range logs {
		if _, err := onB.Publish(ctx, ch, "after"); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, ch+" to get the message after the restart", func() bool { ev, _, _ := l.get(); return len(ev) == 3 })
		events, gaps, errs := l.get()
		if want := []string{"msg:before", "gap", "msg:after"}; !slices.Equal(events, want) || len(errs) != 0 {
			t.Fatalf("%s: events %v, errors %v; want %v and no error", ch, events, errs, want)
		}
		g := gaps[0]
		if g.SubscriptionID != ch || g.Channel != ch || g.Requested != asked[ch] || g.Resumed.Epoch == asked[ch].Epoch {
			t.Errorf("%s: gap %+v; want from %v to a position of the new edge's epoch", ch, g, asked[ch])
		}
		if err := subs[ch].Err(); err != nil {
			t.Errorf("%s ended: %v", ch, err)
		}
	}
	if ss := states.get(); ss[len(ss)-1] != client.Connected || !slices.Contains(ss, client.Disconnected) {
		t.Errorf("states %v: want a disconnection, then connected", ss)
	}
}

// TestLaggingSubscriptionAcrossRestartGap: a subscription paused for a
// slow handler (its data dropped until the handler catches up) whose edge
// restarts meanwhile: once the handler has caught up, it resubscribes on
// the new edge, which does not have its position, and carries on there
// with a gap rather than ending.
func TestLaggingSubscriptionAcrossRestartGap(t *testing.T) {
	t.Parallel()
	a := startEdgeProcess(t)
	px := newProxy(t, strings.TrimPrefix(a.url, "ws://"))
	var logs logRecorder
	// A buffer of less than one message: the handler falls behind at once.
	c := dial(t, px.url(), client.Options{AppKey: a.appkey, DeliveryBufferBytes: 300, Logger: logs.logger()})
	ctx := ctxFor(t)
	var l gapLog
	release, stuck := make(chan struct{}), make(chan struct{})
	var once sync.Once
	handler := func(m client.Message) {
		once.Do(func() {
			close(stuck)
			<-release
		})
		l.message(client.Message{Value: m.Value.(map[string]any)["i"]})
	}
	s, err := c.Subscribe(ctx, "lag", l.options(false), handler)
	if err != nil {
		t.Fatal(err)
	}
	onA := dial(t, a.url, client.Options{AppKey: a.appkey})
	flood(t, onA, "lag", 0, 0)
	poll.Recv(t, "the handler to block", stuck)
	next := 0
	// The client takes a batch into an empty buffer whatever its size, and
	// the edge batches what queues for a subscriber: messages 1-3 may come
	// as one batch that fits. Publish one at a time until a batch finds the
	// buffer taken; each publish is a round trip, so none is wasted.
	poll.Until(t, "the subscription to pause", func() bool {
		if logs.contains("subscription paused") {
			return true
		}
		if next++; next >= 100 {
			t.Fatalf("no pause after %d messages to a buffer of 300 bytes", next)
		}
		flood(t, onA, "lag", next, next)
		return false
	})

	a.kill()
	b := startEdgeProcess(t)
	px.retarget(strings.TrimPrefix(b.url, "ws://"))
	px.cut()
	poll.Until(t, "the client on the new edge", func() bool { return c.State() == client.Connected })
	close(release)
	poll.Until(t, "the gap", func() bool { _, g, _ := l.get(); return len(g) == 1 })
	onB := dial(t, b.url, client.Options{AppKey: b.appkey})
	flood(t, onB, "lag", 100, 100)
	poll.Until(t, "the message on the new edge", func() bool {
		ev, _, _ := l.get()
		return len(ev) > 0 && ev[len(ev)-1] == "msg:100"
	})
	events, _, errs := l.get()
	if len(errs) != 0 || s.Err() != nil || events[0] != "msg:0" || events[len(events)-2] != "gap" {
		t.Fatalf("events %v, errors %v, Err %v; want the messages before, a gap, then 100, and no error", events, errs, s.Err())
	}
}

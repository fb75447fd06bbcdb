package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

func TestResumeAfterDrop(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	var states stateLog
	sub := dial(t, px.url(), client.Options{OnState: states.on})
	pub := publisher(t, e.url, "json")
	ctx := ctxFor(t)
	var got inbox
	s, err := sub.Subscribe(ctx, "resume", nil, got.handle)
	if err != nil {
		t.Fatal(err)
	}
	publishRange(t, pub, "resume", 1, 5)
	got.expect(t, numbers(1, 5))
	px.refuse(true)
	px.cut() // the network fails under the subscriber
	publishRange(t, pub, "resume", 6, 10)
	poll.Until(t, "a refused reconnection", func() bool { return px.refused() > 0 })
	px.refuse(false)
	poll.Until(t, "the subscriber to reconnect", func() bool {
		return slices.Contains(states.get(), client.Disconnected) && sub.State() == client.Connected
	})
	last := publishRange(t, pub, "resume", 11, 15)
	got.expect(t, numbers(1, 15))
	if s.Err() != nil {
		t.Fatalf("subscription ended: %v", s.Err())
	}
	poll.Until(t, "the position to pass the last message", func() bool { return s.Position() == last.Next() })
	if px.accepted() < 2 {
		t.Errorf("proxy forwarded %d connections, want a reconnection", px.accepted())
	}
	poll.Until(t, "the connected state callback", func() bool {
		st := states.get()
		return st[len(st)-1] == client.Connected
	})
	st := states.get()
	if len(st) < 5 || st[0] != client.Connecting || st[1] != client.Connected || st[2] != client.Disconnected ||
		!slices.Contains(st[3:], client.Reconnecting) {
		t.Errorf("states = %v, want connecting, connected, disconnected, reconnecting, ..., connected", st)
	}
}

// watchedCtx is a context that reports when someone first waits on it.
type watchedCtx struct {
	context.Context
	once   sync.Once
	waited chan struct{}
}

func newWatchedCtx(ctx context.Context) *watchedCtx {
	return &watchedCtx{Context: ctx, waited: make(chan struct{})}
}

func (c *watchedCtx) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waited) })
	return c.Context.Done()
}

func TestRequestsWaitForReconnect(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	c := dial(t, px.url(), client.Options{Role: "publisher", RoleSecret: pubSecret})
	ctx := ctxFor(t)
	if _, err := c.Publish(ctx, "before", 0); err != nil {
		t.Fatal(err)
	}
	px.refuse(true)
	px.cut()
	// Once a reconnection was refused, the client knows it has no
	// connection: requests made now have nothing to be sent on.
	poll.Until(t, "a refused reconnection", func() bool { return px.refused() > 0 })
	if s := c.State(); s == client.Connected {
		t.Fatalf("State() = %v while every connection is refused", s)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Publish(short, "later", "too late"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Publish bounded by 50ms while disconnected = %v, want DeadlineExceeded", err)
	}
	type result struct {
		pos rtm.Position
		err error
	}
	done := make(chan result, 1)
	wctx := newWatchedCtx(ctx)
	go func() {
		pos, err := c.Publish(wctx, "later", 1)
		done <- result{pos, err}
	}()
	poll.Recv(t, "the publish to wait for a connection", wctx.waited)
	px.refuse(false)
	r := poll.Recv(t, "the publish to complete", done)
	if r.err != nil {
		t.Fatalf("Publish across a reconnect: %v", r.err)
	}
	if v, pos, err := c.Read(ctx, "later"); err != nil || fmt.Sprint(v) != "1" || pos != r.pos {
		t.Fatalf("Read = %v at %v, %v; want 1 at %v (stored once)", v, pos, err, r.pos)
	}
}

func TestInFlightPublishFailsOnDrop(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	c := dial(t, px.url(), client.Options{Role: "publisher", RoleSecret: pubSecret})
	ctx := ctxFor(t)
	px.hold() // the edge's replies stop coming back
	errc := make(chan error, 1)
	go func() {
		_, err := c.Publish(ctx, "limbo", 1)
		errc <- err
	}()
	poll.Until(t, "the publish to reach the edge", func() bool { return px.held() > 0 })
	px.cut()
	if err := poll.Recv(t, "the publish to fail", errc); !errors.Is(err, client.ErrDisconnected) {
		t.Fatalf("Publish = %v, want ErrDisconnected", err)
	}
	poll.Until(t, "reconnection", func() bool { return px.accepted() >= 2 && c.State() == client.Connected })
	// Not retried: the edge stored the lost publish once, and only that.
	if v, _, err := c.Read(ctx, "limbo"); err != nil || fmt.Sprint(v) != "1" {
		t.Fatalf("Read = %v, %v; want the publish stored by the edge", v, err)
	}
	if _, err := c.Publish(ctx, "limbo", 2); err != nil {
		t.Fatalf("Publish after reconnect: %v", err)
	}
	var all inbox
	if _, err := c.Subscribe(ctx, "limbo", &client.SubscribeOptions{HistoryCount: 10}, all.handle); err != nil {
		t.Fatal(err)
	}
	all.expect(t, numbers(1, 2))
}

// TestResubscribeFromExpiredPosition: a Strict subscription whose
// position expired while the connection was down ends with
// expired_position after the reconnect (without Strict it carries on, see
// TestResumeGapCarriesOn).
func TestResubscribeFromExpiredPosition(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	sub := dial(t, px.url(), client.Options{})
	pub := publisher(t, e.url, "json")
	ctx := ctxFor(t)
	errs := make(chan error, 1)
	var got inbox
	gaps := make(chan client.Gap, 1)
	s, err := sub.Subscribe(ctx, "short.old", &client.SubscribeOptions{Strict: true,
		OnError: func(err error) { errs <- err }, OnGap: func(g client.Gap) { gaps <- g }}, got.handle)
	if err != nil {
		t.Fatal(err)
	}
	publishRange(t, pub, "short.old", 1, 1)
	got.expect(t, numbers(1, 1))
	px.refuse(true)
	px.cut()
	publishRange(t, pub, "short.old", 2, 3) // never read by the subscriber...
	e.expire(shortTTL + shortGrace + time.Second)
	if _, _, err := pub.Read(ctx, "short.old", client.AtPosition(s.Position())); codeOf(err) != rtm.CodeExpiredPosition {
		t.Fatalf("Read where the subscriber resumes = %v, want expired_position", err) // ...and now gone
	}
	px.refuse(false)
	err = poll.Recv(t, "OnError", errs)
	if re, ok := rtm.AsError(err); !ok || re.Code != rtm.CodeExpiredPosition || re.SubscriptionID != "short.old" || re.Reason == "" {
		t.Fatalf("OnError(%v), want expired_position for short.old with a reason", err)
	}
	<-s.Done()
	if !errors.Is(s.Err(), err) {
		t.Errorf("Err() = %v, want %v", s.Err(), err)
	}
	// The client stays connected and usable, and the id is free again.
	poll.Until(t, "reconnection", func() bool { return sub.State() == client.Connected })
	gone := s.Position()
	_, err = sub.Subscribe(ctx, "short.old", &client.SubscribeOptions{ID: "retry", Position: &gone}, func(client.Message) {})
	if codeOf(err) != rtm.CodeExpiredPosition {
		t.Errorf("Subscribe at the expired position = %v, want expired_position", err)
	}
	var again inbox
	if _, err := sub.Subscribe(ctx, "short.old", nil, again.handle); err != nil {
		t.Fatalf("Subscribe after expired_position: %v", err)
	}
	publishRange(t, pub, "short.old", 4, 4)
	again.expect(t, numbers(4, 4))
	if g := got.get(); len(g) != 1 {
		t.Errorf("the ended subscription's handler got %v", g)
	}
	select {
	case g := <-gaps:
		t.Errorf("a Strict subscription reported a gap %+v instead of only ending", g)
	default:
	}
}

// TestDirectHandler: a Direct subscription's handler runs on the reader,
// so it keeps receiving while the delivery goroutine is held by another
// subscription's handler, and it resumes across a dropped connection like
// any other.
func TestDirectHandler(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	px := newProxy(t, e.hostPort())
	sub := dial(t, px.url(), client.Options{})
	pub := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)

	release := make(chan struct{})
	held := make(chan struct{}, 1)
	if _, err := sub.Subscribe(ctx, "queued", nil, func(client.Message) {
		select {
		case held <- struct{}{}:
		default:
		}
		<-release
	}); err != nil {
		t.Fatal(err)
	}
	var got inbox
	s, err := sub.Subscribe(ctx, "direct", &client.SubscribeOptions{Direct: true}, got.handle)
	if err != nil {
		t.Fatal(err)
	}
	publishRange(t, pub, "queued", 1, 1)
	poll.Recv(t, "the queued handler to block", held)
	publishRange(t, pub, "direct", 1, 5)
	got.expect(t, numbers(1, 5)) // while the delivery goroutine is blocked
	close(release)

	px.refuse(true)
	px.cut()
	publishRange(t, pub, "direct", 6, 10)
	poll.Until(t, "a refused reconnection", func() bool { return px.refused() > 0 })
	px.refuse(false)
	last := publishRange(t, pub, "direct", 11, 15)
	got.expect(t, numbers(1, 15))
	poll.Until(t, "the position to pass the last message", func() bool { return s.Position() == last.Next() })
	if s.Err() != nil {
		t.Fatalf("subscription ended: %v", s.Err())
	}
}

//go:build !js

package client

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// subscribeFake subscribes to channel on fc's edge, which accepts at
// position at, and returns the subscription and the values its handler
// receives.
func subscribeFake(t *testing.T, c *Client, fc *fakeConn, channel, at string) (*Subscription, <-chan any) {
	t.Helper()
	return subscribeFakeWith(t, c, fc, channel, at, nil)
}

// subscribeFakeWith is subscribeFake with options.
func subscribeFakeWith(t *testing.T, c *Client, fc *fakeConn, channel, at string, opts *SubscribeOptions) (*Subscription, <-chan any) {
	t.Helper()
	got := make(chan any, 16)
	type result struct {
		s   *Subscription
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := c.Subscribe(context.Background(), channel, opts, func(m Message) { got <- m.Value })
		done <- result{s, err}
	}()
	req := fc.next(t)
	if req.Action != rtm.ActionSubscribe {
		t.Fatalf("sent %s, want %s", req.Action, rtm.ActionSubscribe)
	}
	fc.reply(t, req, rtm.SubscribeReply{Position: at, SubscriptionID: channel})
	r := poll.Recv(t, "Subscribe's return", done)
	if r.err != nil {
		t.Fatalf("Subscribe: %v", r.err)
	}
	return r.s, got
}

// TestReconnectResubscribesFromPosition: when the connection drops, the
// client dials again and resubscribes from the position of the last data
// it received, so the handler gets every message once, in order; the
// states say what happened.
func TestReconnectResubscribesFromPosition(t *testing.T) {
	e := newFakeEdge()
	states := make(chan State, 16)
	c, fc := dialFake(t, e, Options{OnState: func(s State) { states <- s }})
	sub, got := subscribeFake(t, c, fc, "ch", "7:1")
	fc.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
		SubscriptionID: "ch", Position: "7:3", Messages: []any{"a", "b"},
	})
	for _, want := range []string{"a", "b"} {
		if v := poll.Recv(t, "a message", got); v != want {
			t.Fatalf("got %v, want %s", v, want)
		}
	}

	fc.drop()
	fc2 := e.accept(t)
	req := fc2.next(t)
	var body rtm.SubscribeBody
	req.body(t, &body)
	if req.Action != rtm.ActionSubscribe || body.Channel != "ch" || body.SubscriptionID != "ch" ||
		body.Position != "7:3" || body.Force || body.History != nil {
		t.Fatalf("after the drop the client sent %s %+v, want a subscribe of ch at 7:3", req.Action, body)
	}
	fc2.reply(t, req, rtm.SubscribeReply{Position: "7:3", SubscriptionID: "ch"})
	fc2.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
		SubscriptionID: "ch", Position: "7:4", Messages: []any{"c"},
	})
	if v := poll.Recv(t, "the message after the reconnect", got); v != "c" {
		t.Fatalf("got %v after the reconnect, want c", v)
	}
	// Position moves once the handler has returned.
	poll.Until(t, "Position 7:4, after the last message handled", func() bool {
		return sub.Position() == rtm.Position{Epoch: 7, Offset: 4}
	})
	select {
	case v := <-got:
		t.Fatalf("an extra message %v", v)
	default:
	}
	for _, want := range []State{Connecting, Connected, Disconnected, Reconnecting, Connected} {
		if s := poll.Recv(t, "a state", states); s != want {
			t.Fatalf("state %v, want %v", s, want)
		}
	}
}

// TestPublishAcrossReconnect: a publish in flight when the connection
// drops fails with ErrDisconnected (it may have been stored: not
// retried); one made while the client reconnects waits for the new
// connection and is sent there.
func TestPublishAcrossReconnect(t *testing.T) {
	e := newFakeEdge()
	states := make(chan State, 16)
	c, fc := dialFake(t, e, Options{OnState: func(s State) { states <- s }})
	type result struct {
		pos rtm.Position
		err error
	}
	publish := func(v string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			p, err := c.Publish(context.Background(), "ch", v)
			ch <- result{p, err}
		}()
		return ch
	}

	first := publish("x")
	if req := fc.next(t); req.Action != rtm.ActionPublish {
		t.Fatalf("sent %s, want a publish", req.Action)
	}
	fc.drop()
	if r := poll.Recv(t, "the first publish's end", first); !errors.Is(r.err, ErrDisconnected) {
		t.Fatalf("publish in flight at the drop: %v, %v; want ErrDisconnected", r.pos, r.err)
	}

	// Once the client has noticed the loss (Disconnected) it redials; the
	// fake edge holds that dial until it accepts, so the second publish
	// has no connection to go out on. (One made before the client noticed
	// waits too: TestRequestsWaitForReconnectAfterFailure.)
	for s := State(-1); s != Disconnected; {
		s = poll.Recv(t, "the state Disconnected", states)
	}
	second := publish("y")
	fc2 := e.accept(t)
	req := fc2.next(t)
	var body rtm.PublishBody
	req.body(t, &body)
	if req.Action != rtm.ActionPublish || body.Channel != "ch" || body.Message != "y" {
		t.Fatalf("on the new connection the client sent %s %+v, want the publish of y", req.Action, body)
	}
	fc2.reply(t, req, rtm.PositionBody{Position: "7:9"})
	if r := poll.Recv(t, "the second publish's end", second); r.err != nil || r.pos != (rtm.Position{Epoch: 7, Offset: 9}) {
		t.Fatalf("publish after the reconnect: %v, %v; want 7:9", r.pos, r.err)
	}
}

// TestRequestsWaitForReconnectAfterFailure: a request made after the
// connection failed but before the client has finished closing it (a
// close handshake can take seconds) waits for the new connection and is
// sent there, like one made later while the client redials: it must not
// fail at once on the dead connection. In a synctest bubble, so "it
// waits" is checked once every goroutine is blocked.
func TestRequestsWaitForReconnectAfterFailure(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		action string
		reply  any
		do     func(c *Client) error
	}{
		{name: "publish", action: rtm.ActionPublish, reply: rtm.PositionBody{Position: "7:9"},
			do: func(c *Client) error { _, err := c.Publish(ctx, "ch", "y"); return err }},
		{name: "subscribe", action: rtm.ActionSubscribe, reply: rtm.SubscribeReply{Position: "7:9", SubscriptionID: "ch"},
			do: func(c *Client) error { _, err := c.Subscribe(ctx, "ch", nil, func(Message) {}); return err }},
		{name: "read", action: rtm.ActionRead, reply: rtm.ReadReply{Position: "7:9", Message: "y"},
			do: func(c *Client) error { _, _, err := c.Read(ctx, "ch"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newFakeEdge()
				c, fc := dialFake(t, e, Options{})
				closing, release := fc.holdClose(t)
				fc.drop()
				<-closing // the supervisor saw the failure and closes the connection

				done := make(chan error, 1)
				go func() { done <- tt.do(c) }()
				synctest.Wait()
				select {
				case err := <-done:
					t.Fatalf("%s after the failure returned %v before the reconnect; want it to wait", tt.name, err)
				default:
				}

				release()
				fc2 := e.accept(t)
				req := fc2.next(t)
				var body struct{ Channel string }
				req.body(t, &body)
				if req.Action != tt.action || body.Channel != "ch" {
					t.Fatalf("on the new connection the client sent %s %+v, want %s of ch", req.Action, body, tt.action)
				}
				fc2.reply(t, req, tt.reply)
				if err := <-done; err != nil {
					t.Fatalf("%s after the reconnect: %v", tt.name, err)
				}
			})
		})
	}
}

// TestRequestGivenUp: a request whose context ends before its reply
// returns the context's error, and the reply that comes later is not
// taken for another request's.
func TestRequestGivenUp(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		pos rtm.Position
		err error
	}
	given := make(chan result, 1)
	go func() {
		p, err := c.Publish(ctx, "ch", "late")
		given <- result{p, err}
	}()
	late := fc.next(t)
	cancel()
	if r := poll.Recv(t, "the abandoned publish's end", given); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("publish whose context ended: %v, %v; want context.Canceled", r.pos, r.err)
	}

	answered := make(chan result, 1)
	go func() {
		p, err := c.Publish(context.Background(), "ch", "next")
		answered <- result{p, err}
	}()
	req := fc.next(t)
	if *req.ID == *late.ID {
		t.Fatalf("id %d used again", *req.ID)
	}
	fc.reply(t, late, rtm.PositionBody{Position: "7:1"}) // too late: dropped
	fc.reply(t, req, rtm.PositionBody{Position: "7:2"})
	if r := poll.Recv(t, "the next publish's end", answered); r.err != nil || r.pos != (rtm.Position{Epoch: 7, Offset: 2}) {
		t.Fatalf("next publish: %v, %v; want 7:2, its own reply", r.pos, r.err)
	}
}

// TestWriteQueue: requests made while a write is under way wait in the
// connection's queue and leave together in the next write, in the order
// they were made; each acknowledgment reaches its own publish.
func TestWriteQueue(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	const n = 5
	acks := make(chan rtm.Position, n)
	ack := func(p rtm.Position, err error) {
		if err != nil {
			t.Errorf("ack: %v", err)
		}
		acks <- p
	}
	release := fc.holdNextWrite()
	started := make(chan error, 1)
	go func() { started <- c.PublishAsync("ch", int64(0), ack) }() // writes, and is held
	w := fc.write(t)
	if len(w) != 1 {
		t.Fatalf("first write: %d messages, want 1", len(w))
	}
	reqs := []fakeReq{decodeReq(t, w[0])}
	for i := int64(1); i < n; i++ {
		if err := c.PublishAsync("ch", i, ack); err != nil { // queued behind the held write
			t.Fatal(err)
		}
	}
	release()
	if err := poll.Recv(t, "the first PublishAsync's return", started); err != nil {
		t.Fatal(err)
	}
	w = fc.write(t)
	if len(w) != n-1 {
		t.Fatalf("second write: %d messages, want the %d queued meanwhile in one write", len(w), n-1)
	}
	for _, m := range w {
		reqs = append(reqs, decodeReq(t, m))
	}
	for i, r := range reqs {
		var body rtm.PublishBody
		r.body(t, &body)
		if r.Action != rtm.ActionPublish || body.Message != float64(i) {
			t.Fatalf("request %d: %s %+v, want the publish of %d", i, r.Action, body, i)
		}
	}
	// Answered in reverse: each acknowledgment finds its own publish.
	for i := n - 1; i >= 0; i-- {
		fc.reply(t, reqs[i], rtm.PositionBody{Position: rtm.Position{Epoch: 7, Offset: uint64(10 + i)}.String()})
	}
	for i := n - 1; i >= 0; i-- {
		if p := poll.Recv(t, "an acknowledgment", acks); p.Offset != uint64(10+i) {
			t.Fatalf("acknowledgment %v, want 7:%d", p, 10+i)
		}
	}
}

// dropAndRefuseResume subscribes to ch, delivers a and b (resume point
// 7:3), drops the connection and answers the client's resubscription at
// 7:3 with expired_position, as an edge that restarted without the
// channel's history does. It returns the new connection.
func dropAndRefuseResume(t *testing.T, e *fakeEdge, c *Client, fc *fakeConn, opts *SubscribeOptions) (*Subscription, <-chan any, *fakeConn) {
	t.Helper()
	sub, got, fc2 := dropAfterTwo(t, e, c, fc, opts)
	req := fc2.next(t)
	var body rtm.SubscribeBody
	req.body(t, &body)
	if req.Action != rtm.ActionSubscribe || body.Position != "7:3" || body.FastForward {
		t.Fatalf("resubscription %s %+v, want ch at 7:3 without fast_forward", req.Action, body)
	}
	fc2.send(t, rtm.ActionSubscribe+"/error", req.ID, rtm.ErrorBody{
		Error: string(rtm.CodeExpiredPosition), Reason: "position from another history", Position: "7:3", SubscriptionID: "ch",
	})
	return sub, got, fc2
}

// TestResumeExpiredCarriesOn: a reconnect whose position the edge no
// longer has subscribes again with fast_forward, and the application
// hears of the gap (from the position it had to where it resumed) before
// the first message after it.
func TestResumeExpiredCarriesOn(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	gaps := make(chan Gap, 4)
	opts := &SubscribeOptions{OnGap: func(g Gap) { gaps <- g }}
	_, got, fc2 := dropAndRefuseResume(t, e, c, fc, opts)

	req := fc2.next(t)
	var body rtm.SubscribeBody
	req.body(t, &body)
	if req.Action != rtm.ActionSubscribe || !body.FastForward || body.Position != "7:3" || body.SubscriptionID != "ch" {
		t.Fatalf("after expired_position the client sent %s %+v, want ch at 7:3 with fast_forward", req.Action, body)
	}
	fc2.reply(t, req, rtm.SubscribeReply{Position: "8:5", SubscriptionID: "ch"})
	fc2.send(t, rtm.ActionSubscriptionInfo, nil, rtm.SubscriptionInfo{
		Info: rtm.InfoFastForward, Reason: "fast-forwarded to the oldest message", Position: "8:5", SubscriptionID: "ch",
	})
	fc2.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
		SubscriptionID: "ch", Position: "8:6", Messages: []any{"c"},
	})
	if v := poll.Recv(t, "the message after the gap", got); v != "c" {
		t.Fatalf("got %v after the gap, want c", v)
	}
	// OnGap and the handler run one after the other on the delivery
	// goroutine: the gap is already there when c is.
	select {
	case g := <-gaps:
		if g.Channel != "ch" || g.Requested != (rtm.Position{Epoch: 7, Offset: 3}) || g.Resumed != (rtm.Position{Epoch: 8, Offset: 5}) {
			t.Fatalf("gap %+v, want ch from 7:3 to 8:5", g)
		}
	default:
		t.Fatal("the message after the gap came before OnGap")
	}
}

// TestResumeExpiredStrict: with Strict the subscription ends with the
// edge's expired_position instead, and the client asks nothing more.
func TestResumeExpiredStrict(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	sub, _, fc2 := dropAndRefuseResume(t, e, c, fc, &SubscribeOptions{Strict: true})
	poll.Recv(t, "the subscription's end", sub.Done())
	if re, ok := rtm.AsError(sub.Err()); !ok || re.Code != rtm.CodeExpiredPosition {
		t.Fatalf("Err %v, want expired_position", sub.Err())
	}
	// The client is connected again and asks the edge nothing about ch:
	// the next request it makes is the test's publish.
	published := make(chan error, 1)
	go func() {
		_, err := c.Publish(context.Background(), "other", "x")
		published <- err
	}()
	req := fc2.next(t)
	if req.Action != rtm.ActionPublish {
		t.Fatalf("after the strict end the client sent %s, want only the test's publish", req.Action)
	}
	fc2.reply(t, req, rtm.PositionBody{Position: "8:1"})
	if err := poll.Recv(t, "the publish's end", published); err != nil {
		t.Fatal(err)
	}
}

//go:build !js

package client

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// refuseUnavailable answers req, a resubscription of ch at 7:3 (without
// fast_forward) with unavailable, as a clustered edge whose log cannot
// be read during an election does.
func refuseUnavailable(t *testing.T, fc *fakeConn, req fakeReq) {
	t.Helper()
	checkResubscription(t, req, "ch", "7:3")
	fc.send(t, rtm.ActionSubscribe+"/error", req.ID, rtm.ErrorBody{
		Error: string(rtm.CodeUnavailable), Reason: "the cluster's log cannot be read now; try again",
	})
}

// checkResubscription checks that req resubscribes id at pos, without
// fast_forward.
func checkResubscription(t *testing.T, req fakeReq, id, pos string) {
	t.Helper()
	var body rtm.SubscribeBody
	req.body(t, &body)
	if req.Action != rtm.ActionSubscribe || body.SubscriptionID != id || body.Position != pos || body.FastForward {
		t.Fatalf("sent %s %+v, want a resubscription of %s at %s without fast_forward", req.Action, body, id, pos)
	}
}

// dropAfterTwo subscribes to ch, delivers a and b (resume point 7:3) and
// drops the connection; it returns the next one.
func dropAfterTwo(t *testing.T, e *fakeEdge, c *Client, fc *fakeConn, opts *SubscribeOptions) (*Subscription, <-chan any, *fakeConn) {
	t.Helper()
	sub, got := subscribeFakeWith(t, c, fc, "ch", "7:1", opts)
	fc.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
		SubscriptionID: "ch", Position: "7:3", Messages: []any{"a", "b"},
	})
	for range 2 {
		poll.Recv(t, "a message before the drop", got)
	}
	fc.drop()
	return sub, got, e.accept(t)
}

// droppedWithOnError dials a fake edge, subscribes to ch with an
// OnError that reports to errs, and drops the connection after two
// messages (dropAfterTwo); it returns the client and the next connection.
func droppedWithOnError(t *testing.T) (*Client, *Subscription, <-chan any, *fakeConn, <-chan error) {
	t.Helper()
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	errs := make(chan error, 1)
	sub, got, fc2 := dropAfterTwo(t, e, c, fc, &SubscribeOptions{OnError: func(err error) { errs <- err }})
	return c, sub, got, fc2, errs
}

// acceptAndDeliver accepts the next request, a resubscription of ch at
// 7:3, delivers c after it, and checks the handler gets c and nothing
// else: no message lost, none twice.
func acceptAndDeliver(t *testing.T, fc *fakeConn, got <-chan any) {
	t.Helper()
	req := fc.next(t)
	checkResubscription(t, req, "ch", "7:3")
	fc.reply(t, req, rtm.SubscribeReply{Position: "7:3", SubscriptionID: "ch"})
	fc.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
		SubscriptionID: "ch", Position: "7:4", Messages: []any{"c"},
	})
	if v := poll.Recv(t, "the message after the resubscription", got); v != "c" {
		t.Fatalf("got %v after the resubscription, want c", v)
	}
}

// TestResumeUnavailableRetried: a resubscription after a reconnect that
// the edge refuses with unavailable (its log cannot be read now: try
// again) is tried again, from the same position, until the edge takes
// it; the subscription does not end, and its handler goes on without
// gap or duplicate. Meanwhile the client is connected: other requests go
// through.
func TestResumeUnavailableRetried(t *testing.T) {
	c, sub, got, fc2, errs := droppedWithOnError(t)
	refuseUnavailable(t, fc2, fc2.next(t))

	// The publish goes through while ch waits; its retries, before or
	// after the publish, are refused again.
	published := make(chan error, 1)
	go func() {
		_, err := c.Publish(context.Background(), "other", "x")
		published <- err
	}()
	for pub, retried := false, false; !pub || !retried; {
		req := fc2.next(t)
		if req.Action == rtm.ActionPublish && !pub {
			fc2.reply(t, req, rtm.PositionBody{Position: "8:1"})
			pub = true
			continue
		}
		refuseUnavailable(t, fc2, req)
		retried = true
	}
	if err := poll.Recv(t, "the publish's end", published); err != nil {
		t.Fatal(err)
	}
	acceptAndDeliver(t, fc2, got)
	select {
	case <-sub.Done():
		t.Fatalf("the subscription ended: %v", sub.Err())
	case err := <-errs:
		t.Fatalf("OnError heard %v", err)
	default:
	}
}

// TestResumeUnavailableThenDrop: a connection lost while a refused
// resubscription waits for its retry leaves the subscription to the
// next connection, which resubscribes it once, from its position.
func TestResumeUnavailableThenDrop(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	sub, got, fc2 := dropAfterTwo(t, e, c, fc, &SubscribeOptions{Strict: true})
	refuseUnavailable(t, fc2, fc2.next(t))
	fc2.drop() // whether the retry went out on fc2 first or not
	fc3 := e.accept(t)
	acceptAndDeliver(t, fc3, got)

	// ch was resubscribed once: the next request is the test's publish.
	published := make(chan error, 1)
	go func() {
		_, err := c.Publish(context.Background(), "other", "x")
		published <- err
	}()
	if req := fc3.next(t); req.Action != rtm.ActionPublish {
		t.Fatalf("sent %s, want only the test's publish", req.Action)
	} else {
		fc3.reply(t, req, rtm.PositionBody{Position: "8:1"})
	}
	if err := poll.Recv(t, "the publish's end", published); err != nil {
		t.Fatal(err)
	}
	if err := sub.Err(); err != nil {
		t.Fatalf("the subscription ended: %v", err)
	}
}

// TestResumeRefusedOtherwiseEnds: a resubscription refused with another
// code than unavailable (or a gap's expired_position) still ends the
// subscription, and OnError hears the edge's error.
func TestResumeRefusedOtherwiseEnds(t *testing.T) {
	_, sub, _, fc2, errs := droppedWithOnError(t)
	req := fc2.next(t)
	fc2.send(t, rtm.ActionSubscribe+"/error", req.ID, rtm.ErrorBody{
		Error: string(rtm.CodeAuthorizationDenied), Reason: "Unauthorized",
	})
	poll.Recv(t, "the subscription's end", sub.Done())
	if re, ok := rtm.AsError(poll.Recv(t, "OnError", errs)); !ok || re.Code != rtm.CodeAuthorizationDenied {
		t.Fatalf("OnError heard %v, want authorization_denied", re)
	}
}

// TestPushedUnavailableResubscribes: an edge that could not read a
// subscription's history from its log ends it with a pushed
// rtm/subscription/error unavailable at the next message, and asks for a
// resubscribe from there: the client does so on the same connection,
// and its handler goes on without gap or duplicate, told nothing.
func TestPushedUnavailableResubscribes(t *testing.T) {
	e := newFakeEdge()
	c, fc := dialFake(t, e, Options{})
	errs := make(chan error, 1)
	sub, got := subscribeFakeWith(t, c, fc, "ch", "7:1", &SubscribeOptions{OnError: func(err error) { errs <- err }})
	fc.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
		SubscriptionID: "ch", Position: "7:3", Messages: []any{"a", "b"},
	})
	for range 2 {
		poll.Recv(t, "a message before the error", got)
	}
	fc.send(t, rtm.ActionSubscriptionErr, nil, rtm.SubscriptionError{
		Error: string(rtm.CodeUnavailable), Reason: "the history could not be read from the cluster's log; resubscribe",
		Position: "7:3", SubscriptionID: "ch",
	})
	acceptAndDeliver(t, fc, got)
	select {
	case <-sub.Done():
		t.Fatalf("the subscription ended: %v", sub.Err())
	case err := <-errs:
		t.Fatalf("OnError heard %v", err)
	default:
	}
}

// slowRetries are backoff options whose delays (up to 10 s, drawn with
// full jitter) pass only on a synctest bubble's clock, which moves only
// when every goroutine waits: under 20 s, so poll's deadlines come after.
var slowRetries = Options{MinBackoff: 10 * time.Second, MaxBackoff: 10 * time.Second}

// TestResumeUnavailableWaitsBackoff: a resubscription after a reconnect
// that the edge refuses with unavailable is tried again once a backoff
// delay has passed, not at once: the edge said its log cannot be read
// now, and the clients of a cluster in an election must not all come
// back at the same moment. In a synctest bubble: once every goroutine of
// the client waits, nothing was sent, and the retry goes out when the
// clock moves to the retry timer.
func TestResumeUnavailableWaitsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFakeEdge()
		c, fc := dialFake(t, e, slowRetries)
		_, got, fc2 := dropAfterTwo(t, e, c, fc, nil)
		refuseUnavailable(t, fc2, fc2.next(t))
		refused := time.Now()
		fc2.quiet(t, "after the refusal, before the backoff")

		acceptAndDeliver(t, fc2, got)
		if waited := time.Since(refused); waited <= 0 || waited > slowRetries.MaxBackoff {
			t.Fatalf("retried %s after the refusal, want after a backoff delay in (0, %s]", waited, slowRetries.MaxBackoff)
		}
	})
}

// endedUnavailable dials a client with slowRetries, subscribes it to ch
// at 7:3, and to whatever more does, then ends ch as an edge that cannot
// read its history does (pushUnavailable). In a synctest bubble.
func endedUnavailable(t *testing.T, more ...func(*Client, *fakeConn)) (*Client, *fakeConn, <-chan any) {
	t.Helper()
	c, fc := dialFake(t, newFakeEdge(), slowRetries)
	_, got := subscribeFake(t, c, fc, "ch", "7:3")
	for _, m := range more {
		m(c, fc)
	}
	pushUnavailable(t, fc, "ch", "7:3")
	return c, fc, got
}

// pushUnavailable ends subscription id as an edge that cannot read its
// history from its log does, asking for a resubscribe at pos.
func pushUnavailable(t *testing.T, fc *fakeConn, id, pos string) {
	t.Helper()
	fc.send(t, rtm.ActionSubscriptionErr, nil, rtm.SubscriptionError{
		Error: string(rtm.CodeUnavailable), Reason: "the history could not be read from the cluster's log; resubscribe",
		Position: pos, SubscriptionID: id,
	})
}

// TestPushedUnavailableWaitsBackoff: a subscription the edge ends with
// unavailable is resubscribed after a backoff delay, not at once (the
// edge ends at once every subscription whose history it could not read,
// and its log may not be back yet), and so is each retry after a
// refusal on the same connection.
func TestPushedUnavailableWaitsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, fc, got := endedUnavailable(t)
		fc.quiet(t, "after the edge ended ch unavailable, before the backoff")

		refuseUnavailable(t, fc, fc.next(t))
		fc.quiet(t, "after the refusal, before the backoff")
		acceptAndDeliver(t, fc, got)
	})
}

// TestHeldNotSentWithOthers: a resubscription waiting for its backoff
// delay is not sent along with another subscription's resubscription
// meanwhile (a paused one, here after a delta that did not apply): it
// waits its own delay.
func TestHeldNotSentWithOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, fc, got := endedUnavailable(t, func(c *Client, fc *fakeConn) {
			subscribeFakeWith(t, c, fc, "other", "9:1", &SubscribeOptions{Delta: true})
		})

		// A delta with no message before it: other is paused, unsubscribed
		// and resubscribed from 9:1, alone.
		fc.send(t, rtm.ActionSubscriptionData, nil, rtm.SubscriptionData{
			SubscriptionID: "other", Position: "9:2", Messages: []any{"not a delta"}, Delta: true,
		})
		req := fc.next(t)
		var body rtm.UnsubscribeBody
		req.body(t, &body)
		if req.Action != rtm.ActionUnsubscribe || body.SubscriptionID != "other" {
			t.Fatalf("sent %s %+v, want an unsubscribe of other", req.Action, body)
		}
		fc.reply(t, req, rtm.PositionBody{Position: "9:2"})
		req = fc.next(t)
		checkResubscription(t, req, "other", "9:1")
		fc.reply(t, req, rtm.SubscribeReply{Position: "9:1", SubscriptionID: "other"})
		fc.quiet(t, "while ch waits for its backoff delay")

		acceptAndDeliver(t, fc, got)
	})
}

// TestResumeRightAfterSuspend: Resume right after Suspend, before the
// supervisor has seen the connection end and come to wait for Resume,
// reconnects at once, as Resume promises, not after a backoff delay. In
// a synctest bubble the clock moves only when every goroutine waits, so
// "at once" is no time at all.
func TestResumeRightAfterSuspend(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFakeEdge()
		c, _ := dialFake(t, e, slowRetries)
		suspended := time.Now()
		c.Suspend()
		c.Resume()
		e.accept(t)
		if waited := time.Since(suspended); waited != 0 {
			t.Fatalf("reconnected %s after Resume, want at once", waited)
		}
	})
}

// TestDropAfterResumeWaitsBackoff: after Suspend and Resume, a later
// drop of the connection reconnects after a backoff delay, as any drop
// does: only the reconnect Resume asked for goes at once, or every
// client an edge restart drops that was once resumed would come back at
// the same instant.
func TestDropAfterResumeWaitsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newFakeEdge()
		c, _ := dialFake(t, e, slowRetries)
		c.Suspend()
		synctest.Wait() // the supervisor waits for Resume
		c.Resume()
		e.accept(t).drop()
		dropped := time.Now()
		e.accept(t)
		if waited := time.Since(dropped); waited <= 0 || waited > slowRetries.MaxBackoff {
			t.Fatalf("reconnected %s after the drop, want after a backoff delay in (0, %s]", waited, slowRetries.MaxBackoff)
		}
	})
}

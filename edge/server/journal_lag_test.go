package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
)

// laggingLeader is the log as an edge sees it while the stream's leader
// lags what the edges deliver (a follower's copy is ahead of the
// leader's for a few milliseconds, a leader just elected for longer), or
// while no leader answers (an election): what the chaos test met during
// failovers, made to happen on a single node.
type laggingLeader struct {
	chanlog.Journal
	mu sync.Mutex
	// ahead is how many offsets past the stream's last another edge has
	// delivered; the first staleBounds answers of Bounds leave them out.
	ahead, staleBounds int
	// ackDown: Acknowledged finds no leader until it is closed; asked
	// gets a value each time it is called (dropped when full).
	ackDown chan struct{}
	asked   chan struct{}
	// staleLatest, when not 0, is the newest message the first
	// Latest of a channel's newest answers: an older one.
	staleLatest uint64
}

var errNoLeader = errors.New("test: no leader of the stream answered")

func (l *laggingLeader) Bounds(ctx context.Context) (uint64, uint64, error) {
	first, last, err := l.Journal.Bounds(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.staleBounds > 0 {
		l.staleBounds--
		return first, last, err
	}
	return first, last + uint64(l.ahead), err
}

func (l *laggingLeader) Acknowledged(ctx context.Context) (uint64, error) {
	if l.asked != nil {
		select {
		case l.asked <- struct{}{}:
		default:
		}
	}
	if l.ackDown != nil {
		select {
		case <-l.ackDown:
		default:
			return 0, errNoLeader
		}
	}
	return l.Journal.Acknowledged(ctx)
}

func (l *laggingLeader) Latest(ctx context.Context, key string, at uint64) (store.Frame, string, bool, error) {
	l.mu.Lock()
	stale := l.staleLatest
	if at == 0 {
		l.staleLatest = 0
	}
	l.mu.Unlock()
	if at == 0 && stale != 0 {
		at = stale
	}
	return l.Journal.Latest(ctx, key, at)
}

// startLaggingEdge starts an edge on a stream of its own whose leader
// lags as l says; the journal's publish timeout is every request's one
// deadline.
func startLaggingEdge(t *testing.T, l *laggingLeader, timeout time.Duration) *edge {
	t.Helper()
	as := func(j chanlog.Journal) chanlog.Journal { l.Journal = j; return l }
	return startJournalEdgeServed(t, startNode(t), &journal.Options{PublishTimeout: timeout}, nil,
		&servertest.Options{JournalAs: as})
}

// A position another edge delivered may be ahead of what the stream's
// leader has applied: resuming there on an edge that has not applied it
// either is waited for, not refused as beyond the channel's newest (the
// chaos test saw a client that moved to another edge refused so, with
// the position the edge it left had given it).
func TestJournalPositionAheadOfLeader(t *testing.T) {
	e := startLaggingEdge(t, &laggingLeader{ahead: 2, staleBounds: 1}, 0)
	c := e.dial(t, "test", "")
	last := c.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": 1})["position"].(string)
	ahead := plus(t, last, 2)
	if ok := c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "a", "position": ahead}); ok["position"] != ahead {
		t.Fatalf("subscribe at %s: %v", ahead, ok)
	}
	c.expectOK("rtm/publish", 3, map[string]any{"channel": "b", "message": 2})
	if got := c.publishSubscribed(4, "a", map[string]any{"channel": "a", "message": 3}); got.(json.Number).String() != "3" {
		t.Fatalf("the subscription at %s delivered %v first, want 3", ahead, got)
	}
}

// A subscribe without a position starts after every message the log had
// acknowledged when it came, even when the stream's leader does not
// answer at first: it waits for the leader (before, it gave up and
// started from what the edge had applied, and its live part delivered
// a message acknowledged before it).
func TestJournalSubscribeWaitsForTheLeader(t *testing.T) {
	l := &laggingLeader{ackDown: make(chan struct{}), asked: make(chan struct{}, 1)}
	e := startLaggingEdge(t, l, 0)
	sub, pub := e.dial(t, "test", ""), e.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": 1})
	sub.send("rtm/subscribe", 1, map[string]any{"channel": "a", "subscription_id": "a"})
	<-l.asked
	acked := pub.expectOK("rtm/publish", 2, map[string]any{"channel": "a", "message": 2})["position"].(string)
	close(l.ackDown) // a leader answers, with message 2 acknowledged
	ok := sub.recv()
	if ok.Action != "rtm/subscribe/ok" || offsetOf(t, ok.Body["position"].(string)) <= offsetOf(t, acked) {
		t.Fatalf("subscribe after %s was acknowledged: %s %v, want an ok after it", acked, ok.Action, ok.Body)
	}
	if got := sub.publishSubscribed(2, "a", map[string]any{"channel": "a", "message": 3}); got.(json.Number).String() != "3" {
		t.Fatalf("the live subscription delivered %v first, want 3", got)
	}
}

// A subscribe whose edge cannot reach the stream's leader before the
// request's deadline fails with unavailable, which the client may retry:
// not a subscription from what the edge happens to hold.
func TestJournalSubscribeWithoutLeaderUnavailable(t *testing.T) {
	e := startLaggingEdge(t, &laggingLeader{ackDown: make(chan struct{})}, time.Second)
	c := e.dial(t, "test", "")
	c.expectError("rtm/subscribe", 1, map[string]any{"channel": "a"}, "unavailable")
	c.expectError("rtm/subscribe", 2, map[string]any{"channel": "a", "history": map[string]any{"count": 1}}, "unavailable")
}

// A compare-and-set at the channel's newest position is stored though
// the stream's leader, asked first, answers an older message as the
// newest: it has not applied yet what an edge delivered, and the edge
// asks again once it has (before, the write was refused, naming the
// older message as the newest).
func TestJournalCASAheadOfLeader(t *testing.T) {
	l := &laggingLeader{}
	e := startLaggingEdge(t, l, 0)
	c := e.dial(t, "test", "")
	older := c.expectOK("rtm/publish", 1, map[string]any{"channel": "kv", "message": 1})["position"].(string)
	newest := c.expectOK("rtm/publish", 2, map[string]any{"channel": "kv", "message": 2})["position"].(string)
	l.mu.Lock()
	l.staleLatest = offsetOf(t, older)
	l.mu.Unlock()
	c.expectOK("rtm/write", 3, map[string]any{"channel": "kv", "message": 3, "position": newest})
	if r := c.expectOK("rtm/read", 4, map[string]any{"channel": "kv"}); r["message"].(json.Number).String() != "3" {
		t.Fatalf("read after the write: %v, want 3", r)
	}
}

// Package chanlogtest is the conformance suite of channel logs
// (chanlog.Log): what every log must do the same, whether it is the
// memory of an edge alone or a log of record such as JetStream. Run it
// against each (and against any new one) with Run.
package chanlogtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/store/storetest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Env is a log under test.
type Env struct {
	Log chanlog.Log
	// Store holds the log's channels: the log itself, or its replica.
	// Its Options.Clock is Clock and its Retention the one Open got.
	Store *store.Store
	Clock *storetest.Clock
}

// Open returns a fresh, empty log whose channels keep their messages by
// retention, and whose keys are grouped (for a Message's Limit) by what
// precedes their NUL, as the server's are.
type Open func(t *testing.T, retention func(key string) store.Retention) Env

// hour is the retention of the suite's channels: long enough that only
// the clock moves them past it, and no newest message kept past it.
var hour = func(string) store.Retention { return store.Retention{TTL: time.Hour, HistoryCount: -1} }

// Run runs the suite, each case on a log of its own.
func Run(t *testing.T, open Open) {
	cases := []struct {
		name string
		run  func(t *testing.T, e Env)
	}{
		{"AppendRead", testAppendRead},
		{"HistoryCount", testHistoryCount},
		{"SubscribeAtPosition", testSubscribeAt},
		{"HistoryPages", testHistoryPages},
		{"CompareAndSet", testCompareAndSet},
		{"Purge", testPurge},
		{"Expiry", testExpiry},
		{"Fire", testFire},
		{"ChannelLimit", testChannelLimit},
		{"FuturePosition", testFuture},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t, hour)) })
	}
}

// ctx bounds one step of a case.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// appendMsg stores payload in key and returns its position, waiting for a
// log that answers later.
func appendMsg(t *testing.T, e Env, key, payload string, limit int) (rtm.Position, error) {
	t.Helper()
	pos, p, err := e.Log.Channel(key).Append(chanlog.Message{Payload: []byte(payload), Limit: limit})
	if err == nil && p != nil {
		pos, err = p.Wait(ctx(t))
	}
	return pos, err
}

// publish stores the payloads in key and returns their positions.
func publish(t *testing.T, e Env, key string, payloads ...string) []rtm.Position {
	t.Helper()
	var ps []rtm.Position
	for _, m := range payloads {
		pos, err := appendMsg(t, e, key, m, 0)
		if err != nil {
			t.Fatalf("append %q to %q: %v", m, key, err)
		}
		if len(ps) > 0 && (pos.Epoch != ps[0].Epoch || pos.Offset <= ps[len(ps)-1].Offset) {
			t.Fatalf("append %q at %v after %v: positions must grow within one epoch", m, pos, ps[len(ps)-1])
		}
		ps = append(ps, pos)
	}
	return ps
}

// waker signals a channel, for a cursor's Wait.
type waker chan struct{}

func (w waker) Wake() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// drain reads n messages from a subscription: its catch-up, then its
// cursor, waiting for the cursor's wakes. It closes the cursor.
func drain(t *testing.T, cur *store.Cursor, cu *chanlog.CatchUp, n int) []string {
	t.Helper()
	defer cur.Close()
	var got []string
	for cu != nil {
		frames, done, err := cu.Read(ctx(t), 1<<20)
		if err != nil {
			t.Fatalf("catch-up: %v", err)
		}
		for _, f := range frames {
			got = append(got, string(f.Data))
		}
		if done {
			cu = nil
		}
	}
	w := make(waker, 1)
	c := ctx(t)
	for len(got) < n {
		frames, err := cur.Read(nil, 0)
		if err != nil {
			t.Fatalf("cursor after %q: %v", got, err)
		}
		for _, f := range frames {
			got = append(got, string(f.Data))
		}
		if len(frames) > 0 || !cur.Wait(w) {
			continue
		}
		select {
		case <-w:
		case <-c.Done():
			t.Fatalf("subscription got %q, want %d messages", got, n)
		}
	}
	return got
}

// same fails unless got and want hold the same messages in order.
func same(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

package client

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// sprint formats a value for comparisons.
func sprint(v any) string { return fmt.Sprint(v) }

// testCtx returns a context that ends with the test or after 10s.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// dialFake connects to a fake edge with fast reconnects; the client is
// closed when the test ends.
func dialFake(t *testing.T, e *fakeEdge, opts *Options) *Client {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.AppKey == "" {
		o.AppKey = e.appkey
	}
	o.MinBackoff, o.MaxBackoff = time.Millisecond, 20*time.Millisecond
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c, err := Dial(testCtx(t), e.url(), &o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond until it holds or 10s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// recorder collects the messages of a handler.
type recorder struct {
	mu   sync.Mutex
	msgs []Message
}

func (r *recorder) handle(m Message) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	r.mu.Unlock()
}

// values returns the values received so far, formatted.
func (r *recorder) values() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.msgs))
	for i, m := range r.msgs {
		out[i] = sprint(m.Value)
	}
	return out
}

// waitValues waits until exactly want was received.
func (r *recorder) waitValues(t *testing.T, want []string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d messages", len(want)), func() bool { return len(r.values()) >= len(want) })
	if got := r.values(); sprint(got) != sprint(want) {
		t.Fatalf("received %v, want %v", got, want)
	}
}

// seq returns the strings from..to.
func seq(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// stateLog records OnState calls.
type stateLog struct {
	mu     sync.Mutex
	states []State
}

func (l *stateLog) on(s State) {
	l.mu.Lock()
	l.states = append(l.states, s)
	l.mu.Unlock()
}

func (l *stateLog) get() []State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]State(nil), l.states...)
}

package e2e

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// dial connects a client with fast reconnects; it is closed when the test
// ends.
func dial(t *testing.T, url string, opts client.Options) *client.Client {
	t.Helper()
	if opts.AppKey == "" {
		opts.AppKey = "e2e"
	}
	opts.MinBackoff, opts.MaxBackoff = time.Millisecond, 50*time.Millisecond
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	c, err := client.Dial(ctxFor(t), url, &opts)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// publisher connects with the publisher role.
func publisher(t *testing.T, url, codec string) *client.Client {
	t.Helper()
	return dial(t, url, client.Options{Role: "publisher", RoleSecret: pubSecret, Codec: codec})
}

// ctxFor returns a context that ends with the test or after 20 s.
func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// inbox collects what a subscription handler receives.
type inbox struct {
	mu   sync.Mutex
	msgs []string
	last client.Message
}

func (b *inbox) handle(m client.Message) {
	b.mu.Lock()
	b.msgs = append(b.msgs, fmt.Sprint(m.Value))
	b.last = m
	b.mu.Unlock()
}

func (b *inbox) get() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.msgs)
}

// lastMessage returns the last message received.
func (b *inbox) lastMessage() client.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// expect waits for exactly want, in order.
func (b *inbox) expect(t *testing.T, want []string) {
	t.Helper()
	poll.Until(t, fmt.Sprintf("%d messages", len(want)), func() bool { return len(b.get()) >= len(want) })
	if got := b.get(); !slices.Equal(got, want) {
		t.Fatalf("received %v, want %v", got, want)
	}
}

// numbers returns the decimal strings from..to.
func numbers(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// publishRange publishes the integers from..to, each acknowledged.
func publishRange(t *testing.T, c *client.Client, channel string, from, to int) rtm.Position {
	t.Helper()
	var last rtm.Position
	for i := from; i <= to; i++ {
		var err error
		if last, err = c.Publish(ctxFor(t), channel, i); err != nil {
			t.Fatalf("Publish %d: %v", i, err)
		}
	}
	return last
}

// codeOf returns the RTM code of err, "" for nil, "?" for other errors.
func codeOf(err error) rtm.Code {
	if err == nil {
		return ""
	}
	if re, ok := rtm.AsError(err); ok {
		return re.Code
	}
	return "?"
}

// stateLog records a client's OnState calls.
type stateLog struct {
	mu     sync.Mutex
	states []client.State
}

func (l *stateLog) on(s client.State) {
	l.mu.Lock()
	l.states = append(l.states, s)
	l.mu.Unlock()
}

func (l *stateLog) get() []client.State {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.states)
}

// logRecorder is a slog handler keeping the messages of the records it
// gets, for tests that check what a client logs.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *logRecorder) logger() *slog.Logger { return slog.New(r) }

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	r.msgs = append(r.msgs, rec.Message)
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// contains reports whether a message containing s was logged.
func (r *logRecorder) contains(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.msgs, func(m string) bool { return strings.Contains(m, s) })
}

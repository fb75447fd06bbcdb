package deploy

// Clients of the edges the container tests run: the Go client, as an
// application uses it, through the ports the containers publish.

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// demoApp is the app of the image's and the compose file's
// configurations: anyone may publish and subscribe.
const demoApp = "demo"

// ctxFor returns a context that ends with the test or after a minute.
func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// chatter is a client of the demo app with what it went through: the
// states of its connection and, once subscribed, the numbers delivered,
// in order, and any gap or end of the subscription.
type chatter struct {
	*client.Client
	mu     sync.Mutex
	states []client.State
	got    []int
	gaps   []client.Gap
	errs   []error
}

// dialChatter connects to url, reconnecting quickly (within 50ms of an
// edge being back); it is closed when the test ends.
func dialChatter(t *testing.T, url string) *chatter {
	t.Helper()
	ch := &chatter{}
	c, err := client.Dial(ctxFor(t), url, &client.Options{
		AppKey:     demoApp,
		MinBackoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		Logger:  slog.New(slog.DiscardHandler),
		OnState: ch.onState,
	})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { c.Close() })
	ch.Client = c
	return ch
}

// subscribe subscribes to channel from its next message.
func (ch *chatter) subscribe(t *testing.T, channel string) {
	t.Helper()
	_, err := ch.Subscribe(ctxFor(t), channel, &client.SubscribeOptions{
		OnGap:   func(g client.Gap) { ch.mu.Lock(); ch.gaps = append(ch.gaps, g); ch.mu.Unlock() },
		OnError: func(err error) { ch.mu.Lock(); ch.errs = append(ch.errs, err); ch.mu.Unlock() },
	}, ch.onMessage)
	if err != nil {
		t.Fatalf("subscribe to %s: %v", channel, err)
	}
}

func (ch *chatter) onState(s client.State) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.states = append(ch.states, s)
}

func (ch *chatter) onMessage(m client.Message) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if n, ok := m.Value.(int64); ok {
		ch.got = append(ch.got, int(n))
	}
}

// awaits is nil once n was delivered, else what the subscriber has
// seen: the last messages it got, its states, gaps and errors, so that a
// wait that times out says where the subscriber stands.
func (ch *chatter) awaits(n int) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if slices.Contains(ch.got, n) {
		return nil
	}
	return fmt.Errorf("no %d yet; got %d messages, the last %v; states %v; gaps %+v; errors %v",
		n, len(ch.got), ch.got[max(0, len(ch.got)-5):], ch.states, ch.gaps, ch.errs)
}

// wentDown reports whether the connection went down.
func (ch *chatter) wentDown() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return slices.Contains(ch.states, client.Disconnected)
}

// reconnected reports whether the connection went down and up again.
func (ch *chatter) reconnected() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	i := slices.Index(ch.states, client.Disconnected)
	return i >= 0 && slices.Contains(ch.states[i:], client.Connected)
}

// check fails t unless the subscription delivered every acknowledged
// number once, in the order acknowledged, nothing else but the
// unacknowledged (once each), with no gap and no error.
func (ch *chatter) check(t *testing.T, what string, acked []int) {
	t.Helper()
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if len(ch.gaps) > 0 || len(ch.errs) > 0 {
		t.Fatalf("%s: gaps %+v, errors %v; want none", what, ch.gaps, ch.errs)
	}
	seen := make(map[int]int, len(ch.got))
	for i, n := range ch.got {
		if j, dup := seen[n]; dup {
			t.Fatalf("%s: %d delivered twice (at %d and %d)", what, n, j, i)
		}
		seen[n] = i
	}
	prev := -1
	for _, n := range acked {
		i, ok := seen[n]
		if !ok {
			t.Fatalf("%s: acknowledged %d is missing; delivered %v", what, n, ch.got)
		}
		if i < prev {
			t.Fatalf("%s: acknowledged %d delivered before an earlier one: %v", what, n, ch.got)
		}
		prev = i
	}
}

// publishAll publishes from, from+1, ... on channel until count are
// acknowledged, and returns those and the number to publish next. A
// publish in flight when its edge goes may fail (and may have been
// stored): the next number is published then, never the same twice.
func publishAll(t *testing.T, c *chatter, channel string, from, count int) ([]int, int) {
	t.Helper()
	var acked []int
	n := from
	poll.Within(t, time.Minute, fmt.Sprintf("%d publishes from %d acknowledged", count, from), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := c.Publish(ctx, channel, n); err == nil {
			acked = append(acked, n)
		}
		n++
		return len(acked) == count
	})
	return acked, n
}

// readAt returns the message at pos on channel.
func readAt(t *testing.T, c *chatter, channel string, pos rtm.Position) any {
	t.Helper()
	v, at, err := c.Read(ctxFor(t), channel, client.AtPosition(pos))
	if err != nil || at != pos {
		t.Fatalf("read %s at %v: %v at %v", channel, pos, err, at)
	}
	return v
}

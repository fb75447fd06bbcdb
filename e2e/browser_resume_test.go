package e2e

// Resume across a page reload ({resume: "session" | "local"}): a page
// that loads again subscribes where the one before it stopped.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// streamed is what streamInts published.
type streamed struct {
	last int // the number of the last message stored
	err  error
}

// streamInts publishes 1, 2, 3, ... to channel, a few every millisecond
// or so, until stop is closed; then it sends what it published on the
// channel it returns.
func streamInts(ctx context.Context, pub *client.Client, channel string, stop <-chan struct{}) <-chan streamed {
	out := make(chan streamed, 1)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				out <- streamed{last: i - 1}
				return
			default:
			}
			if _, err := pub.Publish(ctx, channel, int64(i)); err != nil {
				out <- streamed{last: i - 1, err: fmt.Errorf("publish %d: %w", i, err)}
				return
			}
			if i%5 == 0 {
				time.Sleep(time.Millisecond) // a stream, not a burst: reloads land inside it
			}
		}
	}()
	return out
}

func testResumeAcrossReload(t *testing.T, b *chrome) {
	for _, kind := range []string{"session", "local"} {
		t.Run(kind, func(t *testing.T) {
			e := startBrowserEdge(t)
			channel := "open.reload-" + kind
			p := b.newTab(t, e.url)
			opts := jsConnectOptions(browserAppkey, map[string]any{"resume": kind})
			start := func() {
				p.t.Helper()
				p.openHarnessHere()
				harnessMust[string](p, "connect", e.url, opts)
				harnessMust[string](p, "subscribeLogged", channel, map[string]any{})
			}
			p.open("/")
			start()
			stop := make(chan struct{})
			ctx, cancel := context.WithCancel(ctxFor(t))
			defer cancel()
			done := streamInts(ctx, browserPublisher(t, e), channel, stop)
			seen := 0
			for range 3 {
				// Some messages in, then a reload while they keep coming;
				// the page after it must hear more than the one before.
				p.waitJS("messages before the reload", fmt.Sprintf("harness.loggedCount() > %d", seen+20))
				p.run("reload", chromedp.Reload())
				start()
				seen = evalJS[int](p, "harness.loggedCount()")
			}
			p.waitJS("messages after the last reload", fmt.Sprintf("harness.loggedCount() > %d", seen))
			close(stop)
			r := poll.Recv(t, "the publisher", done)
			if r.err != nil {
				t.Fatal(r.err)
			}
			p.waitJS("every message", fmt.Sprintf("harness.loggedCount() >= %d", r.last))
			got := evalJS[[]float64](p, "harness.logged()")
			if len(got) != r.last {
				t.Fatalf("the pages logged %d messages over 4 loads, want %d (a duplicate?)", len(got), r.last)
			}
			for i, v := range got {
				if v != float64(i+1) {
					t.Fatalf("message %d is %v, want %d: a gap or a duplicate across a reload", i, v, i+1)
				}
			}
			// One key, for the one subscription; unsubscribing forgets it.
			if keys := evalJS[[]string](p, fmt.Sprintf("harness.resumeKeys(%q)", kind)); len(keys) != 1 {
				t.Fatalf("%s storage holds positions under %q, want one key", kind, keys)
			}
			harnessMust[any](p, "unsubscribe", channel)
			if keys := evalJS[[]string](p, fmt.Sprintf("harness.resumeKeys(%q)", kind)); len(keys) != 0 {
				t.Fatalf("after unsubscribe, %s storage holds %q", kind, keys)
			}
		})
	}
}

// testResumeExpired: a page that loads again after its saved position
// expired subscribes as it asked, and a "gap" event names the position
// it could not resume from.
func testResumeExpired(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	pub := browserPublisher(t, e)
	ctx := ctxFor(t)
	p := b.newTab(t, e.url)
	opts := jsConnectOptions(browserAppkey, map[string]any{"resume": "session"})
	p.openHarness()
	harnessMust[string](p, "connect", e.url, opts)
	harnessMust[string](p, "subscribeLogged", "short.resume", map[string]any{})
	pad := strings.Repeat("x", 400) // fills 1 KiB blocks, so old ones can expire
	if _, err := pub.Publish(ctx, "short.resume", pad); err != nil {
		t.Fatal(err)
	}
	p.waitJS("the message", "harness.loggedCount() === 1")
	saved := evalJS[string](p, `harness.position("short.resume")`)
	p.run("reload", chromedp.Reload())
	at, err := rtm.ParsePosition(saved)
	if err != nil {
		t.Fatalf("position %q: %v", saved, err)
	}
	for range 6 {
		if _, err := pub.Publish(ctx, "short.resume", pad); err != nil {
			t.Fatal(err)
		}
	}
	poll.Until(t, "the saved position to expire", func() bool {
		_, _, err := pub.Read(ctx, "short.resume", client.AtPosition(at))
		return codeOf(err) == rtm.CodeExpiredPosition
	})
	p.openHarnessHere()
	harnessMust[string](p, "connect", e.url, opts)
	harnessMust[string](p, "subscribeLogged", "short.resume", map[string]any{})
	p.waitJS("the gap event", "harness.gaps.length > 0")
	type gap struct {
		Requested string `json:"requested"`
		Resumed   string `json:"resumed"`
	}
	gaps := evalJS[[]gap](p, "harness.gaps")
	if len(gaps) != 1 || gaps[0].Requested != saved || gaps[0].Resumed == "" {
		t.Fatalf("gap events %+v, want one from %s", gaps, saved)
	}
	if _, err := pub.Publish(ctx, "short.resume", "after"); err != nil {
		t.Fatal(err)
	}
	p.waitJS("the message after the gap", `harness.logged().at(-1) === "after"`)
}

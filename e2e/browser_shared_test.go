package e2e

// {shared: true}: the tabs of an origin share one client in a
// SharedWorker: one WebSocket, one sluice.wasm, one subscription per
// channel.

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// edgeGauges reads the connections and subscriptions the edge at url
// (ws://...) has now, from its /metrics.
func edgeGauges(t *testing.T, url string) (conns, subs int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), pageTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http"+strings.TrimPrefix(url, "ws")+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "sluice_server_connections":
			conns = int(n)
		case "sluice_server_subscriptions":
			subs = int(n)
		}
	}
	return conns, subs
}

// waitGauges waits until the edge has conns connections and subs
// subscriptions.
func waitGauges(t *testing.T, url string, conns, subs int) {
	t.Helper()
	var c, s int
	poll.UntilNil(t, fmt.Sprintf("%d connections and %d subscriptions on the edge", conns, subs), func() error {
		if c, s = edgeGauges(t, url); c != conns || s != subs {
			return fmt.Errorf("%d connections, %d subscriptions", c, s)
		}
		return nil
	})
}

// sharedTabs opens n tabs of one browser context on the edge's page, each
// connected with {shared: true} to url and subscribed to channel.
func sharedTabs(t *testing.T, b *chrome, e *cmdEdge, url, appkey, channel string, n int) (owner *tab, tabs []*tab) {
	t.Helper()
	owner = b.newTab(t, e.url) // holds the browser context; its siblings close on their own
	for i := range n {
		p := owner.sibling(t)
		p.name = fmt.Sprintf("tab %d", i+1)
		p.openHarness()
		harnessMust[string](p, "connect", url, jsConnectOptions(appkey, map[string]any{"shared": true}))
		harnessMust[string](p, "subscribe", channel, map[string]any{})
		if evalJS[bool](p, "harness.wasmLoaded()") {
			t.Fatalf("%s fetched sluice.wasm itself: not shared", p)
		}
		tabs = append(tabs, p)
	}
	return owner, tabs
}

// publishInts publishes from..to to channel.
func publishInts(t *testing.T, pub *client.Client, channel string, from, to int) {
	t.Helper()
	ctx := ctxFor(t)
	for i := from; i <= to; i++ {
		if _, err := pub.Publish(ctx, channel, int64(i)); err != nil {
			t.Fatalf("publish %d: %v", i, err)
		}
	}
}

// checkInts checks that a tab received exactly 1..to, in order.
func checkInts(t *testing.T, p *tab, to int) {
	t.Helper()
	p.waitJS(fmt.Sprintf("messages up to %d", to), fmt.Sprintf("harness.count() >= %d", to))
	got := tabMessages(p, 0)
	if len(got) != to {
		t.Fatalf("%s received %d messages, want %d", p, len(got), to)
	}
	for i, r := range got {
		if r.Msg != float64(i+1) {
			t.Fatalf("%s: message %d is %v, want %d: a gap or a duplicate", p, i, r.Msg, i+1)
		}
	}
}

// testSharedTabs: two and three tabs of one origin cost the edge one
// connection and one subscription; each gets every message; closing one
// keeps the others subscribed; closing all closes the connection.
func testSharedTabs(t *testing.T, b *chrome) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%dTabs", n), func(t *testing.T) {
			e := startBrowserEdge(t)
			_, tabs := sharedTabs(t, b, e, e.url, browserAppkey, "open.shared", n)
			waitGauges(t, e.url, 1, 1)
			pub := browserPublisher(t, e)
			publishInts(t, pub, "open.shared", 1, 50)
			for _, p := range tabs {
				checkInts(t, p, 50)
			}
			tabs[0].close()
			waitGauges(t, e.url, 2, 1) // the shared client and the publisher
			publishInts(t, pub, "open.shared", 51, 100)
			for _, p := range tabs[1:] {
				checkInts(t, p, 100)
			}
			for _, p := range tabs[1:] {
				p.close()
			}
			waitGauges(t, e.url, 1, 0) // the publisher alone
		})
	}
}

// testSharedTabsRestart: three shared tabs, connected through a proxy to
// a durable edge, which is killed and started again on its data: the
// worker's one client reconnects and resumes, and every tab gets every
// message once, without a gap.
func testSharedTabsRestart(t *testing.T, b *chrome) {
	s := startBrowserEdge(t) // serves the pages (the origin of the worker)
	dir := t.TempDir()
	d := startEdgeProcess(t, "--data-dir", dir)
	px := newProxy(t, strings.TrimPrefix(d.url, "ws://"))
	_, tabs := sharedTabs(t, b, s, px.url(), d.appkey, "durable", 3)
	waitGauges(t, d.url, 1, 1)
	pub := dial(t, d.url, client.Options{AppKey: d.appkey})
	publishInts(t, pub, "durable", 1, 30)
	for _, p := range tabs {
		checkInts(t, p, 30)
	}
	d.kill()
	pub.Close()
	d2 := startEdgeProcess(t, "--data-dir", dir)
	px.retarget(strings.TrimPrefix(d2.url, "ws://"))
	px.cut() // anything the kill left half-open
	pub2 := dial(t, d2.url, client.Options{AppKey: d2.appkey})
	publishInts(t, pub2, "durable", 31, 60)
	for _, p := range tabs {
		checkInts(t, p, 60)
		if gaps := evalJS[[]any](p, "harness.gaps"); len(gaps) != 0 {
			t.Errorf("%s heard of gaps %v across a restart that kept every message", p, gaps)
		}
	}
	// One client for all the tabs, resubscribed once, and the publisher.
	// (Not the proxy's count of connections: the client's attempts while
	// no edge served count there too.)
	waitGauges(t, d2.url, 2, 1)
}

// testSharedTabBackForwardCache: a shared tab that goes into the
// back/forward cache leaves the worker (dispatched pagehide and pageshow
// with persisted, rather than relying on Chromium to keep the page):
// its client shows "disconnected" meanwhile, and back, it gets what was
// published meanwhile, once, then what comes next.
func testSharedTabBackForwardCache(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	_, tabs := sharedTabs(t, b, e, e.url, browserAppkey, "open.bfcache", 2)
	away := tabs[0]
	evalJS[bool](away, `dispatchEvent(new PageTransitionEvent("pagehide", {persisted: true})), true`)
	away.waitJS("the client to show it is away", `harness.state() === "disconnected"`)
	pub := browserPublisher(t, e)
	publishInts(t, pub, "open.bfcache", 1, 20)
	checkInts(t, tabs[1], 20)
	if n := evalJS[int](away, "harness.count()"); n != 0 {
		t.Fatalf("%s received %d messages while away", away, n)
	}
	evalJS[bool](away, `dispatchEvent(new PageTransitionEvent("pageshow", {persisted: true})), true`)
	away.waitJS("the client back", `harness.state() === "connected"`)
	checkInts(t, away, 20)
	publishInts(t, pub, "open.bfcache", 21, 30)
	for _, p := range tabs {
		checkInts(t, p, 30)
	}
}

// testSharedTabTransport: a shared tab's client reports the worker's
// transport: the HTTP-stream fallback through a proxy that refuses
// WebSocket upgrades (the worker falls back, not the tab), a WebSocket
// where it opens; and the fallback carries the subscription.
func testSharedTabTransport(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	_, tabs := sharedTabs(t, b, e, upgradeBlockingProxy(t, e.url), browserAppkey, "open.transport", 1)
	blocked := tabs[0]
	if got := evalJS[string](blocked, "harness.client.transport"); got != "http-stream" {
		t.Errorf("%s behind the proxy reports transport %q, want http-stream", blocked, got)
	}
	publishInts(t, browserPublisher(t, e), "open.transport", 1, 5)
	checkInts(t, blocked, 5)
	_, tabs = sharedTabs(t, b, e, e.url, browserAppkey, "open.transport", 1)
	if got := evalJS[string](tabs[0], "harness.client.transport"); got != "websocket" {
		t.Errorf("%s reports transport %q, want websocket", tabs[0], got)
	}
}

package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
)

func TestMessageTooLarge(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Apps[0].MaxMessageBytes = 1024 })
	c := e.dial(t, "test", "")
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "a", "message": strings.Repeat("x", 1000)})
	c.expectError("rtm/publish", 2, map[string]any{"channel": "a", "message": strings.Repeat("x", 2000)}, "message_too_large")
	c.expectOK("rtm/publish", 3, map[string]any{"channel": "a", "message": "still usable"})

	// A frame far past any message limit closes the connection with 1009.
	c.send("rtm/publish", 4, map[string]any{"channel": "a", "message": strings.Repeat("x", 64<<10)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _, err := c.ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Fatalf("oversized frame: got %v, want close 1009", err)
	}
}

func TestSubscriptionQuota(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.SubscriptionsPerConnection = 2 })
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "a"})
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "b"})
	c.expectError("rtm/subscribe", 3, map[string]any{"channel": "c"}, "subscription_quota_exceeded")
	c.expectOK("rtm/subscribe", 4, map[string]any{"channel": "b", "force": true}) // a replacement is not a new one
	c.expectOK("rtm/unsubscribe", 5, map[string]any{"subscription_id": "a"})
	c.expectOK("rtm/subscribe", 6, map[string]any{"channel": "c"})
}

func TestRequestRateLimit(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond = 5 })
	c := e.dial(t, "test", "")
	limited := 0
	for i := 1; i <= 20; i++ {
		c.send("rtm/publish", i, map[string]any{"channel": "a", "message": i})
	}
	for i := 1; i <= 20; i++ {
		p := c.recv()
		if p.Action == "rtm/publish/error" && p.Body["error"] == "too_many_requests" {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("20 requests at once under a limit of 5/s: none refused")
	}
	// The connection stays open: a request succeeds once the bucket refills.
	deadline := time.Now().Add(5 * time.Second)
	for id := 100; ; id++ {
		p := c.request("rtm/publish", id, map[string]any{"channel": "a", "message": "later"})
		if p.Action == "rtm/publish/ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still refused after 5 s: %v", p.Body)
		}
		time.Sleep(50 * time.Millisecond) // pacing a retry loop, not waiting for an event
	}
}

// TestRequestBurst: a connection may send RequestBurst requests at once,
// though far more than RequestsPerSecond; past the burst it is refused,
// and the bucket refills no faster than the rate.
func TestRequestBurst(t *testing.T) {
	t.Parallel()
	const burst, n = 20, 30
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond, o.Limits.RequestBurst = 1, burst })
	c := e.dial(t, "test", "")
	start := time.Now()
	for i := 1; i <= n; i++ {
		c.send("rtm/publish", i, map[string]any{"channel": "a", "message": i})
	}
	ok := 0
	for i := 1; i <= n; i++ {
		p := c.recv()
		switch {
		case p.Action == "rtm/publish/ok":
			ok++
		case p.Action != "rtm/publish/error" || p.Body["error"] != "too_many_requests":
			t.Fatalf("reply %d: %s %v", i, p.Action, p.Body)
		}
	}
	// At 1 request a second, at most one token per second elapsed was
	// earned on top of the burst.
	if most := burst + int(time.Since(start)/time.Second) + 1; ok < burst || ok > most {
		t.Fatalf("%d of %d requests sent at once admitted, want the burst of %d (at most %d)", ok, n, burst, most)
	}
}

func TestConnectionLimit(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.Connections = 2 })
	e.dial(t, "test", "")
	e.dial(t, "test", "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third connection over a limit of 2: err %v, resp %v", err, resp)
	}
}

func TestOriginAllowList(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.AllowedOrigins = []string{"app.example.com"} })
	tests := []struct {
		name, origin string
		ok           bool
	}{
		{"allowed", "https://app.example.com", true},
		{"cross-site", "https://evil.example.net", false},
		{"no origin (server SDK)", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			h := http.Header{}
			if tt.origin != "" {
				h.Set("Origin", tt.origin)
			}
			ws, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", &websocket.DialOptions{HTTPHeader: h})
			if tt.ok != (err == nil) {
				t.Fatalf("origin %q: err %v", tt.origin, err)
			}
			if err == nil {
				ws.CloseNow()
			} else if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("origin %q refused without 403: %v", tt.origin, resp)
			}
		})
	}
}

// TestSlowConsumer floods a channel while one subscriber stops reading: the
// store stays within its bounds, the reading subscriber gets every message
// in order, and the stalled one, when it reads again, is told it fell
// behind instead of the edge buffering for it: out_of_sync ends its
// subscription, or with fast_forward it skips ahead and goes on.
func TestSlowConsumer(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name        string
		fastForward bool
	}{{"out_of_sync", false}, {"fast_forward", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			testSlowConsumer(t, tt.fastForward)
		})
	}
}

func testSlowConsumer(t *testing.T, fastForward bool) {
	const channelBytes = 1 << 20
	e := startEdge(t, func(o *server.Options) {
		o.StoreOptions.ChannelBytes = channelBytes
		o.StoreOptions.BlockBytes = 64 << 10
		o.Limits.RequestsPerSecond = 1 << 30
		o.Limits.WriteTimeout = time.Minute
		// The stalled subscriber reads nothing until the flood is over, so
		// it answers no ping: a flood slowed past 30 s by a loaded machine
		// would get it dropped for that instead of for falling behind.
		o.Limits.PingInterval = time.Hour
	})
	slow := e.dial(t, "test", "")
	slow.expectOK("rtm/subscribe", 1, map[string]any{"channel": "flood", "fast_forward": fastForward})
	fast := e.dial(t, "test", "")
	fast.expectOK("rtm/subscribe", 1, map[string]any{"channel": "flood"})
	pub := e.dial(t, "test", "")

	// The publisher keeps at most a window of messages (each stored in three
	// codecs, so about 36 KB) ahead of the reading subscriber, as a
	// subscriber that keeps up would be; the stalled one does not read.
	const n, window = 3000, 30 // 12 MB: more than loopback socket buffers absorb
	pad := strings.Repeat("p", 4000)
	var read atomic.Int64
	got := make(chan error, 1)
	go func() { got <- readSequence(fast, "flood", n, &read) }()
	for i := 0; i < n; i++ {
		for int64(i)-read.Load() >= window {
			select {
			case err := <-got:
				t.Fatalf("reading subscriber stopped at %d: %v", read.Load(), err)
			case <-time.After(time.Millisecond): // poll the reader's progress
			}
		}
		pub.send("rtm/publish", nil, map[string]any{"channel": "flood", "message": map[string]any{"i": i, "pad": pad}})
		if b := e.srv.Store().Stats().Bytes; b > channelBytes+128<<10 {
			t.Fatalf("store holds %d bytes, above the channel limit %d", b, channelBytes)
		}
	}
	if err := <-got; err != nil {
		t.Fatalf("reading subscriber: %v", err)
	}
	checkStalled(t, slow, n, fastForward)
}

// checkStalled reads what the stalled subscriber gets once it reads again:
// a contiguous prefix, then out_of_sync; or, with fast_forward, an info
// and then messages up to the last one, with a jump where it skipped.
func checkStalled(t *testing.T, slow *rawClient, n int, fastForward bool) {
	t.Helper()
	next, skips := 0, 0
	for next < n {
		p := slow.recv()
		switch p.Action {
		case "rtm/subscription/error":
			if fastForward || p.Body["error"] != "out_of_sync" || p.Body["missed_message_count"] == json.Number("0") {
				t.Fatalf("subscription error %v", p.Body)
			}
			return
		case "rtm/subscription/info":
			missed, _ := strconv.Atoi(string(p.Body["missed_message_count"].(json.Number)))
			if !fastForward || p.Body["info"] != "fast_forward" || missed == 0 {
				t.Fatalf("subscription info %v", p.Body)
			}
			next += missed // the count is exact: the next message is the one after the skipped
			skips++
			continue
		}
		for _, m := range p.Body["messages"].([]any) {
			if i, _ := strconv.Atoi(string(m.(map[string]any)["i"].(json.Number))); i != next {
				t.Fatalf("stalled subscriber got %d, want %d", i, next)
			}
			next++
		}
	}
	if !fastForward || skips == 0 {
		t.Fatal("stalled subscriber got every message: the test did not stall it")
	}
}

// readSequence reads n messages {"i": k} of a subscription and checks that
// k runs 0..n-1.
func readSequence(c *rawClient, sub string, n int, progress *atomic.Int64) error {
	return readRange(c, sub, 0, n, progress)
}

// readRange reads messages {"i": k} of a subscription and checks that k
// runs from..to-1 (and on, in the last batch); progress is the next k.
func readRange(c *rawClient, sub string, from, to int, progress *atomic.Int64) error {
	next := from
	if next >= to {
		return nil
	}
	return readEach(c, sub, func(k int) (bool, error) {
		if k != next {
			return false, errors.New("got message " + itoa(k) + ", want " + itoa(next))
		}
		next++
		progress.Store(int64(next))
		return next >= to, nil
	})
}

// readEach reads messages {"i": k} of a subscription, handing each k to
// each, until each says it has all it wants (at the end of that batch)
// or fails.
func readEach(c *rawClient, sub string, each func(k int) (all bool, err error)) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // bounds a hang
	defer cancel()
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			return err
		}
		var p pdu
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&p); err != nil {
			return err
		}
		if p.Action != "rtm/subscription/data" || p.Body["subscription_id"] != sub {
			return errors.New("unexpected " + p.Action + " " + string(data[:min(len(data), 200)]))
		}
		all := false
		for _, msg := range p.Body["messages"].([]any) {
			i, _ := msg.(map[string]any)["i"].(json.Number)
			k, err := strconv.Atoi(i.String())
			if err != nil {
				return errors.New("a message without its i: " + string(data[:min(len(data), 200)]))
			}
			if all, err = each(k); err != nil {
				return err
			}
		}
		if all {
			return nil
		}
	}
}

// TestStalledClientIsDropped checks that a client that stops reading while
// data keeps coming is dropped once a write blocks past the write timeout:
// the edge frees the connection instead of holding it, and counts it.
func TestStalledClientIsDropped(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		o.Limits.WriteTimeout = 300 * time.Millisecond
		o.Limits.RequestsPerSecond = 1 << 30
	})
	stalled := e.dial(t, "test", "")
	stalled.expectOK("rtm/subscribe", 1, map[string]any{"channel": "flood"})
	pub := e.dial(t, "test", "")
	pad := strings.Repeat("p", 8000)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; e.srv.Stats().SlowCloses == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("after %d messages the stalled client is still connected", i)
		}
		pub.send("rtm/publish", nil, map[string]any{"channel": "flood", "message": pad})
	}
	poll.Until(t, "the stalled client's connection to go, only the publisher's left", func() bool {
		return e.srv.Stats().Connections == 1
	})
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "flood", "message": "the others go on"})
}

// TestRefusalReadableCrossOrigin checks the CORS header of a refusal
// before the upgrade, which the browser client fetches to learn why its
// WebSocket failed: present for a page whose origin may connect, absent
// for others, so that a page the edge would not serve learns nothing.
func TestRefusalReadableCrossOrigin(t *testing.T) {
	t.Parallel()
	open := startEdge(t, nil)
	listed := startEdge(t, func(o *server.Options) { o.AllowedOrigins = []string{"app.example.com"} })
	tests := []struct {
		name, base, origin, acao string
	}{
		{name: "any origin allowed", base: open.http.URL, origin: "https://page.example.net", acao: "https://page.example.net"},
		{name: "listed origin", base: listed.http.URL, origin: "https://app.example.com", acao: "https://app.example.com"},
		{name: "unlisted origin", base: listed.http.URL, origin: "https://evil.example.net", acao: ""},
		{name: "no origin (not a page)", base: open.http.URL, origin: "", acao: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequest(http.MethodGet, tt.base+"/v2?appkey=wrong", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(body), `"invalid_appkey"`) {
				t.Fatalf("%d %s, want 401 invalid_appkey", resp.StatusCode, body)
			}
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tt.acao {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.acao)
			}
			if tt.origin != "" && resp.Header.Get("Vary") != "Origin" {
				t.Errorf("Vary %q, want Origin", resp.Header.Get("Vary"))
			}
		})
	}
}

package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// position parses an answer's position.
func position(t testing.TB, body map[string]any) rtm.Position {
	t.Helper()
	s, _ := body["position"].(string)
	p, err := rtm.ParsePosition(s)
	if err != nil {
		t.Fatalf("position of %v: %v", body, err)
	}
	return p
}

// TestPublishReachesSubscriber: a message an API publish stores is
// delivered to an RTM subscriber of the app over a real WebSocket, and
// only of that app.
func TestPublishReachesSubscriber(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	sub := e.subscribe(t, "alpha", "room")
	other := e.subscribe(t, "beta", "room")
	got := e.ok(t, "publish", alphaKey, `{"channel":"room","message":{"text":"hi","n":1}}`)
	p := sub.next()
	if p.Action != "rtm/subscription/data" || len(p.Body.Messages) != 1 || string(p.Body.Messages[0]) != `{"n":1,"text":"hi"}` {
		t.Fatalf("subscriber got %+v", p)
	}
	at := e.ok(t, "read", alphaKey, `{"channel":"room","position":"`+got["position"].(string)+`"}`)
	if m, _ := at["message"].(map[string]any); m["text"] != "hi" {
		t.Fatalf("read at the publish's position %v: %v", got["position"], at)
	}
	// beta's "room" is another channel: its subscriber gets beta's only.
	e.ok(t, "publish", betaKey, `{"channel":"room","message":"beta's"}`)
	if q := other.next(); len(q.Body.Messages) != 1 || string(q.Body.Messages[0]) != `"beta's"` {
		t.Fatalf("beta's subscriber got %+v", q)
	}
}

// TestPublishRefusals: the API refuses what RTM refuses, with its codes.
func TestPublishRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	tests := []struct {
		name, key, body string
		status          int
		code            string
	}{
		{name: "empty channel", key: alphaKey, body: `{"channel":"","message":1}`, status: 400, code: "invalid_format"},
		{name: "control in channel", key: alphaKey, body: `{"channel":"a\nb","message":1}`, status: 400, code: "invalid_format"},
		{name: "too large", key: alphaKey, body: `{"channel":"c","message":"` + strings.Repeat("x", 1100) + `"}`, status: 400, code: "message_too_large"},
		{name: "big number", key: alphaKey, body: `{"channel":"c","message":1e400}`, status: 400, code: "invalid_format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e.call(t, "publish", tt.key, tt.body).refused(t, tt.status, tt.code)
		})
	}
}

// TestChannelQuota: beta may hold two channels; a publish creating a
// third is refused and stores nothing; existing channels go on.
func TestChannelQuota(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	e.ok(t, "publish", betaKey, `{"channel":"one","message":1}`)
	e.ok(t, "publish", betaKey, `{"channel":"two","message":2}`)
	e.call(t, "publish", betaKey, `{"channel":"three","message":3}`).refused(t, http.StatusTooManyRequests, "channel_quota_exceeded")
	e.ok(t, "publish", betaKey, `{"channel":"one","message":4}`)
	if got := e.ok(t, "read", betaKey, `{"channel":"three"}`); got["message"] != nil {
		t.Fatalf("read of the refused channel: %v", got)
	}
}

// TestRead: the newest message, one at a position, none, and refusals.
func TestRead(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	if got := e.call(t, "read", alphaKey, `{"channel":"empty"}`); got.status != 200 || !strings.Contains(got.raw, `"message":null`) {
		t.Fatalf("read of an empty channel: %d %s", got.status, got.raw)
	}
	first := position(t, e.ok(t, "publish", alphaKey, `{"channel":"c","message":"first"}`))
	second := position(t, e.ok(t, "publish", alphaKey, `{"channel":"c","message":{"b":[1,2.5,null]}}`))
	tests := []struct {
		name, body string
		want       string // the answer's raw JSON
	}{
		{name: "newest", body: `{"channel":"c"}`, want: `{"position":"` + second.String() + `","message":{"b":[1,2.5,null]}}`},
		{name: "at a position", body: `{"channel":"c","position":"` + first.String() + `"}`, want: `{"position":"` + first.String() + `","message":"first"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := e.call(t, "read", alphaKey, tt.body)
			if got.status != 200 || strings.TrimSpace(got.raw) != tt.want {
				t.Fatalf("%d %s, want %s", got.status, got.raw, tt.want)
			}
		})
	}
	e.call(t, "read", alphaKey, `{"channel":"c","position":"nope"}`).refused(t, 400, "invalid_format")
	e.call(t, "read", alphaKey, `{"channel":""}`).refused(t, 400, "invalid_format")
	// alpha's channel "c" is not beta's.
	if got := e.call(t, "read", betaKey, `{"channel":"c"}`); !strings.Contains(got.raw, `"message":null`) {
		t.Fatalf("beta read alpha's channel: %s", got.raw)
	}
}

// TestBroadcast: one message to several channels, each with its own
// result; a bad channel fails alone.
func TestBroadcast(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	sub := e.subscribe(t, "alpha", "b2")
	got := e.ok(t, "broadcast", alphaKey, `{"channels":["b1","","b2"],"message":"all"}`)
	results := got["results"].([]any)
	if len(results) != 3 {
		t.Fatalf("results %v", results)
	}
	for i, want := range []string{"b1", "", "b2"} {
		r := results[i].(map[string]any)
		if r["channel"] != want {
			t.Fatalf("result %d is %v, want channel %q", i, r, want)
		}
		if want == "" {
			if r["error"] != "invalid_format" || r["reason"] == "" || r["position"] != nil {
				t.Fatalf("the empty channel's result %v", r)
			}
			continue
		}
		if r["error"] != nil {
			t.Fatalf("result %v", r)
		}
		read := e.ok(t, "read", alphaKey, `{"channel":"`+want+`"}`)
		if read["position"] != r["position"] || read["message"] != "all" {
			t.Fatalf("read %s: %v, broadcast answered %v", want, read, r)
		}
	}
	if p := sub.next(); len(p.Body.Messages) != 1 || string(p.Body.Messages[0]) != `"all"` {
		t.Fatalf("subscriber of b2 got %+v", p)
	}
	e.call(t, "broadcast", alphaKey, `{"channels":[],"message":1}`).refused(t, 400, "invalid_format")
	many := `"c"` + strings.Repeat(`,"c"`, 100)
	reason := e.call(t, "broadcast", alphaKey, `{"channels":[`+many+`],"message":1}`).refused(t, 400, "invalid_format")
	if !strings.Contains(reason, "at most 100") {
		t.Fatalf("reason %q", reason)
	}
}

// TestInfo: the edge's numbers and the app's.
func TestInfo(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	e.subscribe(t, "alpha", "x")
	e.ok(t, "publish", alphaKey, `{"channel":"x","message":1}`)
	e.ok(t, "publish", alphaKey, `{"channel":"y","message":2}`)
	e.ok(t, "publish", betaKey, `{"channel":"z","message":3}`)
	got := e.ok(t, "info", alphaKey, "")
	num := func(m map[string]any, k string) string { return m[k].(json.Number).String() }
	a := got["app"].(map[string]any)
	for _, c := range []struct{ name, got, want string }{
		{"connections", num(got, "connections"), "1"},
		{"subscriptions", num(got, "subscriptions"), "1"},
		{"channels", num(got, "channels"), "3"},
		{"messages_in", num(got, "messages_in"), "3"},
		{"app.channels", num(a, "channels"), "2"},
		{"app.messages_in", num(a, "messages_in"), "2"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %s, want %s (answer %v)", c.name, c.got, c.want, got)
		}
	}
}

// TestPublishSysRefused: the edge's own channels ($sys and $sys.*, where
// dashboards read $sys.stats) are closed to a backend: publish is 403
// authorization_denied saying why, a broadcast's result for them is that
// error while its other channels are stored, and nothing reaches them.
// Names that only start alike stay open.
func TestPublishSysRefused(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	for _, ch := range []string{"$sys.stats", "$sys", "$sys.x.y"} {
		reason := e.call(t, "publish", alphaKey, `{"channel":`+quoteJSON(ch)+`,"message":{"connections":1e6}}`).refused(t, http.StatusForbidden, "authorization_denied")
		if !strings.Contains(reason, ch) || !strings.Contains(reason, "edge's own channel") {
			t.Errorf("publish to %s refused with %q, want a reason naming it the edge's own", ch, reason)
		}
		if m := e.ok(t, "read", alphaKey, `{"channel":`+quoteJSON(ch)+`}`)["message"]; m != nil {
			t.Errorf("%s holds %v after the refusal", ch, m)
		}
	}
	got := e.ok(t, "broadcast", alphaKey, `{"channels":["$sys.stats","news"],"message":1}`)
	results, _ := got["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("broadcast answered %v", got)
	}
	if r := results[0].(map[string]any); r["error"] != "authorization_denied" || r["position"] != nil {
		t.Errorf("broadcast's $sys.stats result %v, want authorization_denied", r)
	}
	if r := results[1].(map[string]any); r["position"] == nil {
		t.Errorf("broadcast's news result %v, want a position", r)
	}
	for _, ch := range []string{"$system", "$sysstats", "sys.stats"} {
		e.ok(t, "publish", alphaKey, `{"channel":`+quoteJSON(ch)+`,"message":1}`)
	}
}

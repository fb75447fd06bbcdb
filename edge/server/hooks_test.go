package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/server"
)

const hookSecret = "hook-secret-0123456789"

// appBackend is an app's backend as a real HTTP server: its connect,
// subscribe and publish hooks decide by the request, and its events
// endpoint hands each batch to events. Every request's signature is
// checked.
type appBackend struct {
	srv    *httptest.Server
	events chan hook.Event
}

func startBackend(t *testing.T) *appBackend {
	t.Helper()
	b := &appBackend{events: make(chan hook.Event, 1000)}
	mux := http.NewServeMux()
	answer := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("/connect", func(w http.ResponseWriter, r *http.Request) {
		var req hook.ConnectRequest
		b.read(t, r, &req)
		switch {
		case req.Token == "slow":
			<-r.Context().Done()
		case req.Token == "admin" && req.Cookies["session"] == "s1" && req.Headers["X-App"] == "chat":
			answer(w, map[string]any{"allow": true, "user": "alice", "role": "admin", "info": map[string]string{"name": "Alice"}})
		case req.Token == "narrow":
			answer(w, map[string]any{"allow": true, "user": "bob", "permissions": map[string]any{"subscribe": []string{"room.*"}}})
		case req.Token == "nosuchrole":
			answer(w, map[string]any{"allow": true, "role": "nosuch"})
		default:
			answer(w, map[string]any{"allow": false, "reason": "unknown token"})
		}
	})
	mux.HandleFunc("/subscribe", func(w http.ResponseWriter, r *http.Request) {
		var req hook.SubscribeRequest
		b.read(t, r, &req)
		switch {
		case req.Channel == "slowsub":
			<-r.Context().Done()
		case strings.HasPrefix(req.Channel, "private."):
			answer(w, map[string]any{"allow": false, "reason": "members only"})
		default:
			answer(w, map[string]any{"allow": true})
		}
	})
	mux.HandleFunc("/publish", func(w http.ResponseWriter, r *http.Request) {
		var req hook.PublishRequest
		b.read(t, r, &req)
		switch req.Channel {
		case "slow":
			<-r.Context().Done()
		case "broken":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "readonly":
			answer(w, map[string]any{"allow": false, "reason": "read-only room"})
		case "censored":
			answer(w, map[string]any{"allow": true, "message": map[string]any{"text": "***", "was": json.RawMessage(req.Message)}})
		default:
			answer(w, map[string]any{"allow": true})
		}
	})
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		var batch hook.Batch
		b.read(t, r, &batch)
		for _, ev := range batch.Events {
			b.events <- ev
		}
	})
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	return b
}

// read decodes a request's body after checking its signature.
func (b *appBackend) read(t *testing.T, r *http.Request, v any) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("reading a hook request: %v", err)
		return
	}
	if err := hook.Verify(hookSecret, r.Header.Get(hook.SignatureHeader), body, time.Now(), 0); err != nil {
		t.Errorf("hook request %s: %v", r.URL.Path, err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Errorf("hook request %s %s: %v", r.URL.Path, body, err)
	}
}

func (b *appBackend) config(onFailure hook.Failure) *hook.Config {
	return &hook.Config{
		Connect: b.srv.URL + "/connect", Subscribe: b.srv.URL + "/subscribe", Publish: b.srv.URL + "/publish",
		// Long enough for a loaded machine running -race: the hooks that
		// time out are the ones that never answer.
		Secret: hookSecret, Timeout: 2 * time.Second, OnFailure: onFailure,
		Events: hook.EventsConfig{URL: b.srv.URL + "/events", Flush: -1},
	}
}

// startHookedEdge starts an edge whose test app has b's hooks.
func startHookedEdge(t *testing.T, b *appBackend, onFailure hook.Failure) *edge {
	t.Helper()
	return startEdge(t, func(o *server.Options) { o.Apps[0].Hooks = b.config(onFailure) })
}

// dialHooked connects with a token, a cookie and a header; a refused
// upgrade returns its HTTP status and JSON error code.
func (e *edge) dialHooked(t *testing.T, token string) (*rawClient, int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h := http.Header{"Cookie": {"session=s1"}, "X-App": {"chat"}}
	ws, resp, err := websocket.Dial(ctx, e.url+"/v2?appkey=test&token="+token, &websocket.DialOptions{HTTPHeader: h})
	if err != nil {
		if resp == nil {
			t.Fatalf("dial: %v", err)
		}
		var body struct{ Error, Reason string }
		if derr := json.NewDecoder(resp.Body).Decode(&body); derr != nil || body.Reason == "" {
			t.Fatalf("refusal %d without a JSON reason: %v", resp.StatusCode, derr)
		}
		return nil, resp.StatusCode, body.Error
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &rawClient{t: t, ws: ws}, http.StatusSwitchingProtocols, ""
}

// mustDialHooked is dialHooked for a connection the hook allows.
func (e *edge) mustDialHooked(t *testing.T, token string) *rawClient {
	t.Helper()
	c, status, code := e.dialHooked(t, token)
	if c == nil {
		t.Fatalf("dial with token %q refused: %d %s", token, status, code)
	}
	return c
}

func TestConnectHookDecides(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	e := startHookedEdge(t, b, hook.FailDeny)
	tests := []struct {
		name, token string
		status      int
		code        string
	}{
		{"allowed", "admin", http.StatusSwitchingProtocols, ""},
		{"denied", "forged", http.StatusForbidden, "authorization_denied"},
		{"timed out", "slow", http.StatusServiceUnavailable, "unavailable"},
		{"role the app lacks", "nosuchrole", http.StatusServiceUnavailable, "unavailable"},
	}
	t.Run("dial", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				c, status, code := e.dialHooked(t, tt.token)
				if status != tt.status || code != tt.code {
					t.Fatalf("dial = %d %q, want %d %q", status, code, tt.status, tt.code)
				}
				if c != nil {
					// The hook's role is admin's, which may publish to $ channels.
					c.expectOK("rtm/publish", 1, map[string]any{"channel": "$admin", "message": 1})
				}
			})
		}
	})
	st := e.srv.HookStats()["test"].Hooks[0]
	if st.Allowed != 1 || st.Denied != 1 || st.Failed != 2 {
		t.Fatalf("connect hook stats = %+v, want 1 allowed, 1 denied, 2 failed", st)
	}
}

func TestConnectHookPermissionsAndFailAllow(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	e := startHookedEdge(t, b, hook.FailAllow)
	c, status, _ := e.dialHooked(t, "narrow")
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("narrow: %d", status)
	}
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room.1"})
	c.expectError("rtm/subscribe", 2, map[string]any{"channel": "lobby"}, "authorization_denied")
	c.expectError("rtm/publish", 3, map[string]any{"channel": "room.1", "message": 1}, "authorization_denied")
	// A hook that does not answer lets the client in with the default role.
	d, status, _ := e.dialHooked(t, "slow")
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("slow with on_failure allow: %d", status)
	}
	d.expectError("rtm/publish", 1, map[string]any{"channel": "$admin", "message": 1}, "authorization_denied")
	d.expectOK("rtm/publish", 2, map[string]any{"channel": "lobby", "message": 1})
}

func TestSubscribeAndPublishHooks(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	e := startHookedEdge(t, b, hook.FailDeny)
	c := e.mustDialHooked(t, "admin")
	deny := c.expectError("rtm/subscribe", 1, map[string]any{"channel": "private.x"}, "authorization_denied")
	if deny["reason"] != "members only" {
		t.Fatalf("subscribe denial reason %v, want the backend's", deny["reason"])
	}
	deny = c.expectError("rtm/subscribe", 2, map[string]any{"channel": "slowsub"}, "authorization_denied")
	if !strings.Contains(deny["reason"].(string), "did not answer") {
		t.Fatalf("a timed out subscribe hook's reason: %v", deny["reason"])
	}
	for i, ch := range []string{"censored", "readonly", "broken", "slow", "open"} {
		c.expectOK("rtm/subscribe", 10+i, map[string]any{"channel": ch})
	}
	got := c.publishSubscribed(20, "censored", map[string]any{"channel": "censored", "message": map[string]any{"text": "darn"}})
	want := map[string]any{"text": "***", "was": map[string]any{"text": "darn"}}
	if g, _ := json.Marshal(got); string(g) != mustJSON(t, want) {
		t.Fatalf("censored delivered %s, want %s", g, mustJSON(t, want))
	}
	deny = c.expectError("rtm/publish", 21, map[string]any{"channel": "readonly", "message": 1}, "authorization_denied")
	if deny["reason"] != "read-only room" {
		t.Fatalf("publish denial reason %v", deny["reason"])
	}
	c.expectError("rtm/publish", 22, map[string]any{"channel": "broken", "message": 1}, "authorization_denied")
	c.expectError("rtm/publish", 23, map[string]any{"channel": "slow", "message": 1}, "authorization_denied")
	// After the hook's failures the connection serves on.
	if got := c.publishSubscribed(24, "open", map[string]any{"channel": "open", "message": "hi"}); got != "hi" {
		t.Fatalf("open delivered %v", got)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nextEvent returns the backend's next event, failing after 5 s.
func (b *appBackend) nextEvent(t *testing.T) (hook.Event, map[string]any) {
	t.Helper()
	select {
	case ev := <-b.events:
		var data map[string]any
		if err := json.Unmarshal(ev.Data, &data); err != nil {
			t.Fatalf("event data %s: %v", ev.Data, err)
		}
		return ev, data
	case <-time.After(5 * time.Second):
		t.Fatal("no event")
	}
	panic("unreachable")
}

// TestOccupancyAndEvents: a channel is occupied by its first subscriber
// and vacated by its last (a forced resubscribe vacates nothing), a user
// joins a room with its first connection there and leaves with its last
// (alice's two connections are one member), and a connection's close is a
// disconnect event, last.
func TestOccupancyAndEvents(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	e := startHookedEdge(t, b, hook.FailDeny)
	alice := e.mustDialHooked(t, "admin")
	other := e.mustDialHooked(t, "admin")
	alice.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room"})
	ev, data := b.nextEvent(t)
	if ev.Kind != hook.KindChannelOccupied || data["channel"] != "room" || ev.Appkey != "test" || ev.ID == "" {
		t.Fatalf("first event %+v %v, want channel_occupied room", ev, data)
	}
	ev, data = b.nextEvent(t)
	if ev.Kind != hook.KindPresenceJoin || data["channel"] != "room" || data["user"] != "alice" ||
		data["info"].(map[string]any)["name"] != "Alice" {
		t.Fatalf("second event %+v %v, want alice's presence_join with her info", ev, data)
	}
	other.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room"})
	other.expectOK("rtm/unsubscribe", 2, map[string]any{"subscription_id": "room"})
	// A forced resubscribe replaces the subscription without vacating.
	alice.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room", "force": true})
	if err := alice.ws.Close(websocket.StatusNormalClosure, "bye"); err != nil {
		t.Fatal(err)
	}
	var closing []string
	for len(closing) < 2 {
		ev, data = b.nextEvent(t)
		if data["channel"] != "room" {
			t.Fatalf("event %+v %v, want one of room", ev, data)
		}
		closing = append(closing, ev.Kind)
	}
	slices.Sort(closing)
	if want := []string{hook.KindChannelVacated, hook.KindPresenceLeave}; !slices.Equal(closing, want) {
		t.Fatalf("events at alice's close: %v, want %v", closing, want)
	}
	ev, data = b.nextEvent(t)
	if ev.Kind != hook.KindDisconnect || data["user"] != "alice" || data["code"] != float64(1000) ||
		ev.Edge == "" || !strings.HasPrefix(data["connection"].(string), ev.Edge+".") {
		t.Fatalf("last event %+v %v, want alice's disconnect", ev, data)
	}
	select {
	case ev := <-b.events:
		t.Fatalf("unexpected event %+v %s", ev, ev.Data)
	default:
	}
}

// TestConnectHookUserInPresence: the user a connect hook names is the
// connection's one identity: presence lists it, with the hook's info, and
// the server API's unsubscribe by that user ends its subscription and so
// its presence in the room.
func TestConnectHookUserInPresence(t *testing.T) {
	t.Parallel()
	b := startBackend(t)
	e := startEdge(t, func(o *server.Options) {
		o.Apps[0].Hooks = b.config(hook.FailDeny)
		o.Apps[0].Roles["admin"].Permissions.Presence = []string{"*"}
	})
	alice := e.mustDialHooked(t, "admin")
	alice.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room.1", "presence": true})
	snap := alice.presencePush("room.1", "members")
	if ids := userIDs(snap["members"]); !slices.Equal(ids, []string{"alice"}) {
		t.Fatalf("snapshot %v: want alice, the user the connect hook named", snap)
	}
	if info := snap["members"].([]any)[0].(map[string]any)["info"]; info.(map[string]any)["name"] != "Alice" {
		t.Fatalf("alice's info: %v, want the connect hook's", info)
	}
	bob := e.mustDialHooked(t, "narrow")
	bob.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room.1"})
	wantPushed(t, alice.presencePush("room.1", "join"), "bob", 2, 2)
	n, err := e.srv.BackendUnsubscribe("test", "", "bob", "room.1")
	if err != nil || n != 1 {
		t.Fatalf("BackendUnsubscribe(bob) = %d, %v; want 1 subscription ended", n, err)
	}
	if p := bob.recv(); p.Action != "rtm/subscription/error" || p.Body["error"] != "authorization_denied" {
		t.Fatalf("bob got %s %v, want his subscription ended", p.Action, p.Body)
	}
	wantPushed(t, alice.presencePush("room.1", "leave"), "bob", 1, 1)
}

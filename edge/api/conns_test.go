package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
)

// startUserEdge starts an edge whose alpha app has a connect hook
// (userHookApps), and tells each connection's id on ids.
func startUserEdge(t *testing.T) (*edge, chan string) {
	t.Helper()
	ids := make(chan string, 100)
	e := startEdgeOf(t, &server.Options{Apps: userHookApps(t, ids), StoreOptions: &store.Options{SweepInterval: -1}}, nil, nil)
	return e, ids
}

// userHookApps returns the test apps, alpha's with a connect hook (a real
// HTTP server) making the ?token= the connection's user and telling each
// connection's id on ids, the way a backend learns them.
func userHookApps(t *testing.T, ids chan string) []*app.App {
	t.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req hook.ConnectRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("connect hook: %v", err)
		}
		ids <- req.Connection
		_ = json.NewEncoder(w).Encode(map[string]any{"allow": true, "user": req.Token})
	}))
	t.Cleanup(backend.Close)
	apps := testApps()
	apps[0].Hooks = &hook.Config{Connect: backend.URL, Secret: "hook-secret-0123456789", Timeout: 5 * time.Second}
	return apps
}

// dialUser connects to alpha as user, subscribed to channel, and returns
// the connection's id.
func (e *edge) dialUser(t *testing.T, ids chan string, user, channel string) (*subscriber, string) {
	t.Helper()
	return e.dialUserWith(t, ids, user, `{"channel":`+quoteJSON(channel)+`}`)
}

// dialUserWith is dialUser with the subscribe body given.
func (e *edge) dialUserWith(t *testing.T, ids chan string, user, subscribe string) (*subscriber, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/v2?appkey=alpha&token="+user, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	s := &subscriber{t: t, ws: ws}
	frame := `{"action":"rtm/subscribe","id":1,"body":` + subscribe + `}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	if p := s.next(); p.Action != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %+v", p)
	}
	return s, <-ids
}

// closed reads until the connection is closed and returns its close
// status and reason.
func (s *subscriber) closed() (websocket.StatusCode, string) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := s.ws.Read(ctx); err != nil {
			var ce websocket.CloseError
			if !errors.As(err, &ce) {
				s.t.Fatalf("read ended with %v, not a close", err)
			}
			return ce.Code, ce.Reason
		}
	}
}

func TestDisconnect(t *testing.T) {
	t.Parallel()
	e, ids := startUserEdge(t)
	a1, _ := e.dialUser(t, ids, "alice", "room")
	a2, _ := e.dialUser(t, ids, "alice", "room")
	b1, bID := e.dialUser(t, ids, "bob", "room")
	carol, _ := e.dialUser(t, ids, "carol", "room")

	if got := e.ok(t, "disconnect", alphaKey, `{"user":"alice","reason":"banned"}`); got["disconnected"] != json.Number("2") {
		t.Fatalf("disconnect alice = %v, want 2", got)
	}
	for _, s := range []*subscriber{a1, a2} {
		if code, reason := s.closed(); code != 4000 || reason != "banned" {
			t.Fatalf("alice closed with %d %q, want 4000 banned", code, reason)
		}
	}
	if got := e.ok(t, "disconnect", alphaKey, `{"connection":`+quoteJSON(bID)+`}`); got["disconnected"] != json.Number("1") {
		t.Fatalf("disconnect bob's connection = %v", got)
	}
	if code, reason := b1.closed(); code != 4000 || reason != "disconnected by the app's backend" {
		t.Fatalf("bob closed with %d %q", code, reason)
	}
	// Another app's key reaches none of alpha's connections.
	if got := e.ok(t, "disconnect", betaKey, `{"user":"carol"}`); got["disconnected"] != json.Number("0") {
		t.Fatalf("beta disconnecting alpha's carol = %v", got)
	}
	e.call(t, "disconnect", alphaKey, `{}`).refused(t, http.StatusBadRequest, "invalid_format")
	e.call(t, "disconnect", alphaKey, `{"user":"carol","reason":"`+strings.Repeat("x", 124)+`"}`).refused(t, http.StatusBadRequest, "invalid_format")
	// carol is still connected and served.
	e.ok(t, "publish", alphaKey, `{"channel":"room","message":"still here"}`)
	if p := carol.next(); p.Action != "rtm/subscription/data" || string(p.Body.Messages[0]) != `"still here"` {
		t.Fatalf("carol got %+v", p)
	}
}

func TestUnsubscribe(t *testing.T) {
	t.Parallel()
	e, ids := startUserEdge(t)
	alice, _ := e.dialUser(t, ids, "alice", "room")
	bob, _ := e.dialUser(t, ids, "bob", "room")
	if got := e.ok(t, "unsubscribe", alphaKey, `{"user":"alice","channel":"room"}`); got["unsubscribed"] != json.Number("1") {
		t.Fatalf("unsubscribe alice = %v", got)
	}
	if p := alice.next(); p.Action != "rtm/subscription/error" || p.Body.Position == "" {
		t.Fatalf("alice got %+v, want rtm/subscription/error with a position", p)
	}
	e.ok(t, "publish", alphaKey, `{"channel":"room","message":1}`)
	if p := bob.next(); p.Action != "rtm/subscription/data" {
		t.Fatalf("bob got %+v", p)
	}
	if got := e.ok(t, "unsubscribe", alphaKey, `{"user":"alice","channel":"room"}`); got["unsubscribed"] != json.Number("0") {
		t.Fatalf("second unsubscribe = %v", got)
	}
	e.call(t, "unsubscribe", alphaKey, `{"user":"bob"}`).refused(t, http.StatusBadRequest, "invalid_format")
	e.call(t, "unsubscribe", alphaKey, `{"channel":"room"}`).refused(t, http.StatusBadRequest, "invalid_format")
}

package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
)

const (
	gammaKey = "gamma-key-0123456789"
	gammaJWT = "gamma-jwt-secret-of-32-bytes-long"
)

// startTokenEdge serves app "gamma", whose clients may do nothing before
// they authenticate: its "reader" role subscribes to news.*, its
// "writer" role publishes and subscribes anywhere. Its tokens live at most
// 10 minutes. App "beta" has no jwt key. The API's clock is c.
func startTokenEdge(t *testing.T, c *clock) *edge {
	t.Helper()
	e, _ := startTokenEdgeLogged(t, c)
	return e
}

// startTokenEdgeLogged is startTokenEdge, with the edge's log.
func startTokenEdgeLogged(t *testing.T, c *clock) (*edge, *logBuffer) {
	t.Helper()
	log := &logBuffer{}
	gamma := &app.App{Key: "gamma", APIKeys: []string{gammaKey},
		JWT: &app.JWTKey{Secret: []byte(gammaJWT), MaxTokenTTL: 10 * time.Minute},
		Roles: map[string]*app.Role{
			"default": {Name: "default"},
			"reader":  {Name: "reader", Permissions: app.Permissions{Subscribe: []string{"news.*"}}},
			"writer":  {Name: "writer", Permissions: app.Permissions{Publish: []string{"*"}, Subscribe: []string{"*"}}},
		}}
	apps := []*app.App{gamma, testApps()[1]}
	sopts := &server.Options{Apps: apps, StoreOptions: &store.Options{SweepInterval: -1}, Logger: slog.New(slog.NewTextHandler(log, nil))}
	return startEdgeOf(t, sopts, nil, &api.Options{Now: c.now}), log
}

// logBuffer holds what a logger wrote, for several goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// count returns how many times s was written.
func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// mint asks the API for a token and returns it with its expiry.
func (e *edge) mint(t *testing.T, body string) (string, int64) {
	t.Helper()
	out := e.ok(t, "token", gammaKey, body)
	tok, _ := out["token"].(string)
	exp, err := out["expires_at"].(json.Number).Int64()
	if tok == "" || err != nil {
		t.Fatalf("token answered %v", out)
	}
	return tok, exp
}

func TestTokenSubscribesOverSSE(t *testing.T) {
	e := startTokenEdge(t, &clock{t: time.Now()})
	tok, _ := e.mint(t, `{"role":"reader","user":"alice"}`)
	resp := e.stream(t, "/v2/subscribe?appkey=gamma&channel=news.a", tok)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribe with the token: %s", resp.Status)
	}
	e.ok(t, "publish", gammaKey, `{"channel":"news.a","message":"extra"}`)
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("read the stream: %v", err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			if !strings.Contains(data, `"message":"extra"`) {
				t.Fatalf("event %q", data)
			}
			break
		}
	}
	if r := e.stream(t, "/v2/subscribe?appkey=gamma&channel=news.a", ""); r.StatusCode != http.StatusForbidden {
		t.Errorf("subscribe without a token: %s, want 403", r.Status)
	}
}

func TestTokenAuthenticatesWebSocket(t *testing.T) {
	e := startTokenEdge(t, &clock{t: time.Now()})
	writer, _ := e.mint(t, `{"role":"writer","ttl":60}`)
	ws := e.dial(t, "gamma")
	if p := e.rtm(t, ws, "auth/authenticate", `{"method":"jwt","credentials":{"token":"`+writer+`"}}`); p.Action != "auth/authenticate/ok" {
		t.Fatalf("authenticate: %+v", p)
	}
	if p := e.rtm(t, ws, "rtm/publish", `{"channel":"chat","message":1}`); p.Action != "rtm/publish/ok" {
		t.Fatalf("writer's publish: %+v", p)
	}
}

func TestTokenOfNarrowerRoleCannotPublish(t *testing.T) {
	e := startTokenEdge(t, &clock{t: time.Now()})
	reader, _ := e.mint(t, `{"role":"reader"}`)
	ws := e.dial(t, "gamma")
	if p := e.rtm(t, ws, "auth/authenticate", `{"method":"jwt","credentials":{"token":"`+reader+`"}}`); p.Action != "auth/authenticate/ok" {
		t.Fatalf("authenticate: %+v", p)
	}
	if p := e.rtm(t, ws, "rtm/publish", `{"channel":"news.a","message":1}`); p.Action != "rtm/publish/error" || p.Body.Error != "authorization_denied" {
		t.Fatalf("reader's publish over WebSocket: %+v", p)
	}
	a := e.post(t, "/v2/publish?appkey=gamma", reader, `{"channel":"news.a","message":1}`)
	a.refused(t, http.StatusForbidden, "authorization_denied")
}

func TestTokenExpiredIsRefused(t *testing.T) {
	// The API's clock is two hours behind the edge's: what it mints for
	// a minute has long expired when a client uses it.
	e, log := startTokenEdgeLogged(t, &clock{t: time.Now().Add(-2 * time.Hour)})
	tok, _ := e.mint(t, `{"role":"writer","ttl":60}`)
	resp := e.stream(t, "/v2/subscribe?appkey=gamma&channel=news.a&token="+tok, "")
	var body map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	// The client is told authentication_failed, in Satori's words; why
	// is for the edge's log (edge/session's authFailed).
	if resp.StatusCode != http.StatusUnauthorized || body["error"] != "authentication_failed" {
		t.Errorf("expired token on /v2/subscribe: %s %v", resp.Status, body)
	}
	ws := e.dial(t, "gamma")
	p := e.rtm(t, ws, "auth/authenticate", `{"method":"jwt","credentials":{"token":"`+tok+`"}}`)
	if p.Action != "auth/authenticate/error" || p.Body.Error != "authentication_failed" {
		t.Errorf("expired token on the WebSocket: %+v", p)
	}
	if n := log.count(`detail="token expired"`); n != 2 {
		t.Errorf("the edge logged %d expired tokens, want 2", n)
	}
}

func TestTokenTTLAndRefusals(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	e := startTokenEdge(t, c)
	if _, exp := e.mint(t, `{}`); exp != c.now().Add(api.DefaultTokenTTL).Unix() {
		t.Errorf("default expiry %d, want %s later", exp, api.DefaultTokenTTL)
	}
	if _, exp := e.mint(t, `{"ttl":600}`); exp != c.now().Unix()+600 {
		t.Errorf("expiry %d of ttl 600", exp)
	}
	for _, tc := range []struct{ key, body, code string }{
		{gammaKey, `{"ttl":601}`, "invalid_format"},
		{gammaKey, `{"ttl":-1}`, "invalid_format"},
		{gammaKey, `{"role":"admin"}`, "invalid_format"},
		{gammaKey, `{"publish":["a*b"]}`, "invalid_format"},
		{gammaKey, `{"user":"` + strings.Repeat("u", 257) + `"}`, "invalid_format"},
		{gammaKey, `{"expires":1}`, "invalid_format"},
		{betaKey, `{}`, "auth_method_not_allowed"},
	} {
		if reason := e.call(t, "token", tc.key, tc.body).refused(t, http.StatusBadRequest, tc.code); tc.key == betaKey && !strings.Contains(reason, "jwt_key") {
			t.Errorf("reason %q does not name jwt_key", reason)
		}
	}
}

// stream GETs path with a Bearer token ("" for none); the response ends
// with the test.
func (e *edge) stream(t *testing.T, path, token string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp
}

// post POSTs a JSON body to path with a Bearer token.
func (e *edge) post(t *testing.T, path, token, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	a := answer{status: resp.StatusCode, header: resp.Header}
	if err := json.NewDecoder(resp.Body).Decode(&a.body); err != nil {
		t.Fatalf("POST %s answered %s, not JSON: %v", path, resp.Status, err)
	}
	a.raw = fmt.Sprint(a.body)
	return a
}

// reply is an RTM reply: its action and its body's error and reason.
type reply struct {
	Action string `json:"action"`
	Body   struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	} `json:"body"`
}

// rtm sends one request and returns the reply to it.
func (e *edge) rtm(t *testing.T, ws *websocket.Conn, action, body string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"action":"`+action+`","id":1,"body":`+body+`}`)); err != nil {
		t.Fatal(err)
	}
	return servertest.Recv[reply](t, ws, 5*time.Second)
}

// dial opens an RTM connection to appkey, closed with the test.
func (e *edge) dial(t *testing.T, appkey string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/v2?appkey="+appkey, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

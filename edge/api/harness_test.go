package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The API keys of the test apps: "alpha" has two (a rotation), "beta" one.
const (
	alphaKey    = "alpha-key-0123456789"
	alphaNewKey = "alpha-new-key-0123456789abcdef"
	betaKey     = "beta-key-0123456789"
	alphaJWT    = "alpha-jwt-secret-of-32-bytes-long"
)

func testApps() []*app.App {
	perms := app.Permissions{Publish: []string{"*"}, Subscribe: []string{"*"}}
	return []*app.App{
		{Key: "alpha", APIKeys: []string{alphaKey, alphaNewKey}, MaxMessageBytes: 1024, JWT: &app.JWTKey{Secret: []byte(alphaJWT)},
			Roles: map[string]*app.Role{"default": {Name: "default", Permissions: perms}}},
		{Key: "beta", APIKeys: []string{betaKey}, MaxChannels: 2,
			Roles: map[string]*app.Role{"default": {Name: "default", Permissions: perms}}},
	}
}

// edge is a real edge (RTM at /v2, the API at /api/) on a loopback port.
type edge struct {
	srv *server.Server
	api *api.Handler
	url string // http://127.0.0.1:PORT
}

// clock is a settable clock for the idempotency window.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func startEdge(t testing.TB, opts *api.Options) *edge {
	t.Helper()
	return startEdgeOf(t, &server.Options{Apps: testApps(), StoreOptions: &store.Options{SweepInterval: -1}}, nil, opts)
}

// startEdgeOf serves an edge with sopts (and with j as its log of record,
// if not nil) and the API with opts beside it.
func startEdgeOf(t testing.TB, sopts *server.Options, j *journal.Journal, opts *api.Options) *edge {
	t.Helper()
	if opts == nil {
		opts = &api.Options{}
	}
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	var h *api.Handler
	se := servertest.Start(t, sopts, &servertest.Options{Journal: j, Handler: func(srv *server.Server) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/v2", srv)
		mux.Handle("/v2/", srv) // the HTTP streaming endpoints
		h = api.New(srv, opts)
		mux.Handle(api.Prefix, h)
		return mux
	}})
	return &edge{srv: se.Server, api: h, url: se.HTTP.URL}
}

// answer is an HTTP answer: its status and its JSON body.
type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// call POSTs body to /api/method with the key in X-API-Key ("" for none).
func (e *edge) call(t testing.TB, method, key, body string) answer {
	t.Helper()
	return e.do(t, http.MethodPost, method, body, func(h http.Header) {
		if key != "" {
			h.Set("X-API-Key", key)
		}
	})
}

// do sends a request with the headers set by hdr.
func (e *edge) do(t testing.TB, verb, method, body string, hdr func(http.Header)) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, verb, e.url+"/api/"+method, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hdr(req.Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s /api/%s: %v", verb, method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&a.body); err != nil {
		t.Fatalf("%s /api/%s answered %d %q, not a JSON object: %v", verb, method, resp.StatusCode, raw, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	return a
}

// ok calls a method that must succeed and returns its answer's body.
func (e *edge) ok(t testing.TB, method, key, body string) map[string]any {
	t.Helper()
	a := e.call(t, method, key, body)
	if a.status != http.StatusOK {
		t.Fatalf("/api/%s %s: %d %s", method, body, a.status, a.raw)
	}
	return a.body
}

// refused checks an error answer's status and code, and returns its reason.
func (a answer) refused(t testing.TB, status int, code string) string {
	t.Helper()
	if a.status != status || a.body["error"] != code {
		t.Fatalf("answer %d %s, want %d with error %q", a.status, a.raw, status, code)
	}
	reason, _ := a.body["reason"].(string)
	if reason == "" {
		t.Fatalf("answer %s has no reason", a.raw)
	}
	return reason
}

// subscriber is an RTM client over a real WebSocket, in JSON.
type subscriber struct {
	t  testing.TB
	ws *websocket.Conn
}

// subscribe opens a connection to appkey and subscribes to channel.
func (e *edge) subscribe(t testing.TB, appkey, channel string) *subscriber {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(e.url, "http")+"/v2?appkey="+appkey, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	s := &subscriber{t: t, ws: ws}
	frame := `{"action":"rtm/subscribe","id":1,"body":{"channel":` + quoteJSON(channel) + `}}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	if p := s.next(); p.Action != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %+v", p)
	}
	return s
}

type pdu struct {
	Action string `json:"action"`
	Body   struct {
		Position string            `json:"position"`
		Messages []json.RawMessage `json:"messages"`
	} `json:"body"`
}

// next reads the next PDU within 5 s.
func (s *subscriber) next() pdu {
	s.t.Helper()
	return servertest.Recv[pdu](s.t, s.ws, 5*time.Second)
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

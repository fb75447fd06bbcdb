package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a store clock the tests move by hand.
type fakeClock = storetest.Clock

// edge is a real edge behind a real HTTP server on a loopback port.
type edge struct {
	srv     *server.Server
	journal *journal.Journal // of an edge with one (startJournalEdge): its first partition's
	// partitions are the journals of every partition, in order.
	partitions []*journal.Journal
	http       *httptest.Server
	clock      *fakeClock
	url        string // ws://127.0.0.1:PORT
}

const adminSecret = "admin-secret"

// testApp is the app the conformance tests use: the default role may use
// every unreserved channel; "admin" (by role_secret) also the reserved ones;
// "reader" may only subscribe to "news*".
func testApp() *app.App {
	return &app.App{
		Key: "test",
		Roles: map[string]*app.Role{
			"default": {Name: "default", Permissions: app.Permissions{Publish: []string{"*"}, Subscribe: []string{"*"}}},
			"admin": {Name: "admin", Secret: adminSecret,
				Permissions: app.Permissions{Publish: []string{"*", "$*"}, Subscribe: []string{"*", "$*"}}},
			"reader": {Name: "reader", Secret: "reader-secret",
				Permissions: app.Permissions{Subscribe: []string{"news*"}}},
		},
		JWT: &app.JWTKey{Secret: []byte(jwtSecret)},
	}
}

const jwtSecret = "jwt-test-secret-of-32-bytes-long!"

// startEdge starts an edge with a manual clock and no background sweeper;
// mutate adjusts its options.
func startEdge(t testing.TB, mutate func(*server.Options)) *edge {
	t.Helper()
	clock := storetest.NewClock(time.Unix(1_700_000_000, 0))
	opts := &server.Options{
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		Apps:         []*app.App{testApp()},
		StoreOptions: &store.Options{Clock: clock, SweepInterval: -1},
	}
	if mutate != nil {
		mutate(opts)
	}
	e := servertest.Start(t, opts, nil)
	return &edge{srv: e.Server, http: e.HTTP, clock: clock, url: e.URL}
}

// rawClient speaks RTM with hand-written frames, as an SDK does.
type rawClient struct {
	t  testing.TB
	ws *websocket.Conn
}

// dial connects with the given subprotocol ("" for the RTM default, JSON).
func (e *edge) dial(t testing.TB, appkey, subprotocol string) *rawClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var protos []string
	if subprotocol != "" {
		protos = []string{subprotocol}
	}
	ws, _, err := websocket.Dial(ctx, e.url+"/v2?appkey="+appkey, &websocket.DialOptions{Subprotocols: protos})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(64 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &rawClient{t: t, ws: ws}
}

// sendText writes one text frame.
func (c *rawClient) sendText(frame string) {
	c.t.Helper()
	c.sendTextWithin(5*time.Second, frame)
}

// sendTextWithin is sendText with its own bound on a write the edge
// does not take (TCP pushing back), for a client that floods an edge on
// purpose: the edge takes its frames at the channel log's pace.
func (c *rawClient) sendTextWithin(d time.Duration, frame string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// send writes one JSON PDU; id nil means no id.
func (c *rawClient) send(action string, id any, body any) {
	c.t.Helper()
	c.sendText(string(pduJSON(c.t, action, id, body)))
}

// pduJSON encodes a PDU; id nil means no id.
func pduJSON(t testing.TB, action string, id any, body any) []byte {
	t.Helper()
	pdu := map[string]any{"action": action, "body": body}
	if id != nil {
		pdu["id"] = id
	}
	b, err := json.Marshal(pdu)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return b
}

// pdu is a received PDU, numbers kept exact.
type pdu = servertest.PDU

// recvTimeout bounds how long recv waits. It only bounds a hang: a PDU
// that is due comes at once on a quiet machine, but a test behind a flood
// of its own (thousands of pipelined requests, with -race, on a loaded
// 2-core machine) must not fail for being slow.
const recvTimeout = 30 * time.Second

// recv reads the next PDU, failing the test after recvTimeout.
func (c *rawClient) recv() pdu {
	c.t.Helper()
	return c.recvWithin(recvTimeout)
}

// recvWithin reads the next PDU, failing the test after d.
func (c *rawClient) recvWithin(d time.Duration) pdu {
	c.t.Helper()
	return servertest.Recv[pdu](c.t, c.ws, d)
}

// request sends a request with an integer id and returns its reply.
func (c *rawClient) request(action string, id int, body any) pdu {
	c.t.Helper()
	c.send(action, id, body)
	p := c.recv()
	if p.ID == nil || p.ID.(json.Number).String() != strconv.Itoa(id) {
		c.t.Fatalf("%s: reply %+v does not carry id %d", action, p, id)
	}
	return p
}

// expectOK sends a request and fails unless the reply is ok.
func (c *rawClient) expectOK(action string, id int, body any) map[string]any {
	c.t.Helper()
	p := c.request(action, id, body)
	if p.Action != action+"/ok" {
		c.t.Fatalf("%s: got %s %v, want ok", action, p.Action, p.Body)
	}
	return p.Body
}

// expectError sends a request and fails unless the reply is the error code.
func (c *rawClient) expectError(action string, id int, body any, code string) map[string]any {
	c.t.Helper()
	p := c.request(action, id, body)
	if p.Action != action+"/error" || p.Body["error"] != code {
		c.t.Fatalf("%s: got %s %v, want error %s", action, p.Action, p.Body, code)
	}
	if r, _ := p.Body["reason"].(string); r == "" {
		c.t.Fatalf("%s: error %s without a reason", action, code)
	}
	return p.Body
}

// recvData reads PDUs until n messages of subscription sub arrived; it
// returns them and the last data position.
func (c *rawClient) recvData(sub string, n int) ([]any, string) {
	c.t.Helper()
	var msgs []any
	var pos string
	for len(msgs) < n {
		p := c.recv()
		if p.Action != "rtm/subscription/data" || p.Body["subscription_id"] != sub {
			c.t.Fatalf("waiting for data of %s: got %s %v", sub, p.Action, p.Body)
		}
		msgs = append(msgs, p.Body["messages"].([]any)...)
		pos = p.Body["position"].(string)
	}
	if len(msgs) != n {
		c.t.Fatalf("got %d messages, want %d: %v", len(msgs), n, msgs)
	}
	return msgs, pos
}

// publishSubscribed publishes on a channel this connection subscribes to
// (as subscription sub) and returns the message delivered back. The ok
// and the data may come in either order: with a journal the reply waits
// for the log's acknowledgment, and the feed may bring the message to
// the subscription first.
func (c *rawClient) publishSubscribed(id int, sub string, body map[string]any) any {
	c.t.Helper()
	c.send("rtm/publish", id, body)
	var ok bool
	var msgs []any
	for !ok || msgs == nil {
		p := c.recv()
		switch {
		case p.Action == "rtm/publish/ok" && p.ID != nil && p.ID.(json.Number).String() == strconv.Itoa(id):
			ok = true
		case p.Action == "rtm/subscription/data" && p.Body["subscription_id"] == sub && msgs == nil:
			msgs = p.Body["messages"].([]any)
		default:
			c.t.Fatalf("publish %d on %s: got %s %v", id, sub, p.Action, p.Body)
		}
	}
	if len(msgs) != 1 {
		c.t.Fatalf("publish %d on %s delivered %v", id, sub, msgs)
	}
	return msgs[0]
}

func itoa(n int) string { return strconv.Itoa(n) }

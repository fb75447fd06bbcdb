package presencekv_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/presencekv"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const jwtSecret = "presencekv-test-secret-of-32-bytes!"

// The timing of the tests' Syncs: an edge silent for ttl is gone.
const (
	heartbeat = 200 * time.Millisecond
	ttl       = time.Second
)

func testApp() *app.App {
	return &app.App{Key: "test", JWT: &app.JWTKey{Secret: []byte(jwtSecret)}, Roles: map[string]*app.Role{
		"default": {Name: "default", Permissions: app.Permissions{Subscribe: []string{"*"}, Presence: []string{"*"}}},
	}}
}

// startEdge serves an edge whose presence is kept in the cluster's
// bucket through node.
func startEdge(t *testing.T, node *journal.Node) string {
	t.Helper()
	nc, err := node.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	reg := presence.New()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sync, err := presencekv.Start(ctx, nc, reg, &presencekv.Options{Replicas: 3, Heartbeat: heartbeat, TTL: ttl, Logger: journaltest.Logger()})
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sync.Close()
		nc.Close()
	})
	e := servertest.Start(t, &server.Options{Apps: []*app.App{testApp()}, Presence: reg,
		StoreOptions: &store.Options{SweepInterval: -1}}, nil)
	return e.URL
}

// conn is a JSON RTM connection authenticated as a user.
type conn struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialAs(t *testing.T, url, user string) *conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url+"/v2?appkey=test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	c := &conn{t: t, ws: ws}
	tok, err := auth.Mint([]byte(jwtSecret), auth.Claims{Role: "default", Subject: user, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c.request("auth/authenticate", map[string]any{"method": "jwt", "credentials": map[string]any{"token": tok}})
	return c
}

// recv reads the next PDU, failing the test after d.
func (c *conn) recv(d time.Duration) servertest.PDU {
	c.t.Helper()
	return servertest.Recv[servertest.PDU](c.t, c.ws, d)
}

// request sends a request and returns its ok reply's body.
func (c *conn) request(action string, body any) map[string]any {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"action": action, "id": 1, "body": body})
	if err := c.ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
	p := c.recv(10 * time.Second)
	if p.Action != action+"/ok" {
		c.t.Fatalf("%s: %s %v", action, p.Action, p.Body)
	}
	return p.Body
}

// push waits up to d for a presence push and returns its event and user.
func (c *conn) push(d time.Duration) (event, user string) {
	c.t.Helper()
	p := c.recv(d)
	if p.Action != "rtm/subscription/presence" {
		c.t.Fatalf("got %s %v, want a presence push", p.Action, p.Body)
	}
	ms := p.Body["members"].([]any)
	if len(ms) != 1 {
		return p.Body["event"].(string), ""
	}
	return p.Body["event"].(string), ms[0].(map[string]any)["user_id"].(string)
}

// TestMembersAcrossEdges: a member of one edge is a member on every edge
// of the cluster; when its edge crashes (its NATS node is gone, nothing
// said goodbye), the other edges' subscribers see it leave within the ttl
// and a heartbeat.
func TestMembersAcrossEdges(t *testing.T) {
	nodes := journaltest.Cluster(t, 3)
	urlA, urlB := startEdge(t, nodes[0]), startEdge(t, nodes[1])
	ann := dialAs(t, urlA, "ann")
	ann.request("rtm/subscribe", map[string]any{"channel": "room", "presence": true})
	if ev, _ := ann.push(10 * time.Second); ev != "members" {
		t.Fatalf("first push %s, want the snapshot", ev)
	}
	// Bob, on edge B, sees ann: in his snapshot if her key reached edge B
	// before, else in a join right after.
	bob := dialAs(t, urlB, "bob")
	bob.request("rtm/subscribe", map[string]any{"channel": "room", "presence": true})
	p := bob.recv(10 * time.Second)
	if p.Action != "rtm/subscription/presence" || p.Body["event"] != "members" {
		t.Fatalf("bob's first push: %s %v, want his snapshot", p.Action, p.Body)
	}
	if p.Body["users"] != json.Number("2") {
		if ev, user := bob.push(10 * time.Second); ev != "join" || user != "ann" {
			t.Fatalf("on edge B: %s %s, want ann's join from edge A", ev, user)
		}
	}
	if ev, user := ann.push(10 * time.Second); ev != "join" || user != "bob" {
		t.Fatalf("on edge A: %s %s, want bob's join from edge B", ev, user)
	}
	got := ann.request("rtm/presence", map[string]any{"channel": "room"})
	if got["users"] != json.Number("2") || len(got["members"].([]any)) != 2 {
		t.Fatalf("rtm/presence on edge A: %v, want ann and bob", got)
	}
	// A newcomer on edge B gets both in its snapshot, and itself.
	carl := dialAs(t, urlB, "carl")
	carl.request("rtm/subscribe", map[string]any{"channel": "room", "presence": true})
	p = carl.recv(10 * time.Second)
	if p.Action != "rtm/subscription/presence" || p.Body["event"] != "members" || p.Body["users"] != json.Number("3") {
		t.Fatalf("carl's snapshot: %s %v, want 3 members", p.Action, p.Body)
	}
	if ev, user := ann.push(10 * time.Second); ev != "join" || user != "carl" {
		t.Fatalf("on edge A: %s %s, want carl's join", ev, user)
	}

	nodes[1].Close() // edge B's node: its heartbeats stop
	start := time.Now()
	bound := ttl + 2*heartbeat
	left := map[string]bool{}
	for len(left) < 2 {
		// The bound, and room for a loaded machine to schedule the
		// edge's reaper and the push.
		ev, user := ann.push(bound + 3*time.Second)
		if ev != "leave" {
			t.Fatalf("after edge B crashed: %s %s, want leaves", ev, user)
		}
		left[user] = true
	}
	took := time.Since(start)
	if !left["bob"] || !left["carl"] {
		t.Fatalf("left: %v, want bob and carl", left)
	}
	t.Logf("edge B's members left edge A %v after its crash (ttl %v, heartbeat %v)", took, ttl, heartbeat)
}

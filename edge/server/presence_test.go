package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicehq/sluice/internal/poll"
)

// presenceToken is a JWT for user (sub) with info, granting presence on
// patterns on top of the default role's publish and subscribe.
func presenceToken(t *testing.T, user string, info any, patterns ...string) string {
	t.Helper()
	claims := jwt.MapClaims{"role": "default", "sub": user, "exp": time.Now().Add(time.Hour).Unix(), "presence": patterns}
	if info != nil {
		claims["info"] = info
	}
	return signJWT(t, []byte(jwtSecret), claims)
}

// member dials a connection authenticated as user, with presence on
// "room*".
func (e *edge) member(t *testing.T, user string, info any) *rawClient {
	t.Helper()
	c := e.dial(t, "test", "")
	c.expectOK("auth/authenticate", 1, jwtBody(presenceToken(t, user, info, "room*")))
	return c
}

// presencePush reads the next PDU and fails unless it is a presence push
// of sub with event.
func (c *rawClient) presencePush(sub, event string) map[string]any {
	c.t.Helper()
	p := c.recv()
	if p.Action != "rtm/subscription/presence" || p.Body["subscription_id"] != sub || p.Body["event"] != event {
		c.t.Fatalf("waiting for presence %s of %s: got %s %v", event, sub, p.Action, p.Body)
	}
	return p.Body
}

// userIDs lists the user ids of a members array.
func userIDs(members any) []string {
	var ids []string
	for _, m := range members.([]any) {
		ids = append(ids, m.(map[string]any)["user_id"].(string))
	}
	slices.Sort(ids)
	return ids
}

// wantPushed fails unless a join or leave push is of user and the room's
// counts are users and conns.
func wantPushed(t *testing.T, body map[string]any, user string, users, conns int) {
	t.Helper()
	if ids := userIDs(body["members"]); !slices.Equal(ids, []string{user}) ||
		body["users"] != json.Number(itoa(users)) || body["connections"] != json.Number(itoa(conns)) {
		t.Fatalf("push %v: want user %s, %d users, %d connections", body, user, users, conns)
	}
}

func TestPresenceJoinLeaveAcrossConnections(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	ann := e.member(t, "ann", map[string]any{"name": "Ann"})
	ann.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1", "presence": true})
	snap := ann.presencePush("room1", "members")
	if ids := userIDs(snap["members"]); !slices.Equal(ids, []string{"ann"}) || snap["more"] != nil {
		t.Fatalf("snapshot %v: want ann alone, complete", snap)
	}
	if info := snap["members"].([]any)[0].(map[string]any)["info"]; info.(map[string]any)["name"] != "Ann" {
		t.Fatalf("ann's info in the snapshot: %v", info)
	}

	bob1 := e.member(t, "bob", "Bob")
	bob1.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1"})
	join := ann.presencePush("room1", "join")
	wantPushed(t, join, "bob", 2, 2)
	if info := join["members"].([]any)[0].(map[string]any)["info"]; info != "Bob" {
		t.Fatalf("bob's info in his join: %v", info)
	}

	// Bob's second connection makes him no second member: ann gets no
	// push (her presence reply is the next thing she reads, and a push
	// would have been queued before bob2's subscribe was answered).
	bob2 := e.member(t, "bob", "Bob")
	bob2.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1"})
	got := ann.expectOK("rtm/presence", 3, map[string]any{"channel": "room1"})
	if ids := userIDs(got["members"]); !slices.Equal(ids, []string{"ann", "bob"}) || got["users"] != json.Number("2") || got["connections"] != json.Number("3") {
		t.Fatalf("rtm/presence: %v; want ann and bob, 2 users, 3 connections", got)
	}
	for _, m := range got["members"].([]any) {
		if m := m.(map[string]any); m["user_id"] == "bob" && m["connections"] != json.Number("2") {
			t.Fatalf("bob's connections: %v, want 2", m)
		}
	}

	// Closing one of bob's connections leaves him in; unsubscribing the
	// other makes him leave.
	if err := bob2.ws.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	waitPresenceStats(t, ann, "room1", 2, 2)
	bob1.expectOK("rtm/unsubscribe", 3, map[string]any{"subscription_id": "room1"})
	wantPushed(t, ann.presencePush("room1", "leave"), "bob", 1, 1)
}

// waitStats asks for the room's presence until its counts are users and
// conns (the edge sees a closed connection go when its read ends, which
// no event of the asker's marks).
func waitPresenceStats(t *testing.T, c *rawClient, room string, users, conns int) {
	t.Helper()
	id := 100
	poll.UntilNil(t, fmt.Sprintf("presence of %s with %d users and %d connections", room, users, conns), func() error {
		got := c.expectOK("rtm/presence", id, map[string]any{"channel": room})
		id++
		if got["users"] != json.Number(itoa(users)) || got["connections"] != json.Number(itoa(conns)) {
			return fmt.Errorf("still %v", got)
		}
		return nil
	})
}

func TestPresenceLeaveOnReset(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	ann := e.member(t, "ann", nil)
	ann.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1", "presence": true})
	ann.presencePush("room1", "members")

	// Bob's TCP connection is reset under him: no close frame, no FIN.
	var tcp *net.TCPConn
	dialer := &net.Dialer{}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			tcp = nc.(*net.TCPConn)
		}
		return nc, err
	}}}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, e.url+"/v2?appkey=test", &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	bob := &rawClient{t: t, ws: ws}
	bob.expectOK("auth/authenticate", 1, jwtBody(presenceToken(t, "bob", nil, "room*")))
	bob.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1"})
	wantPushed(t, ann.presencePush("room1", "join"), "bob", 2, 2)
	if err := tcp.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	tcp.Close()
	wantPushed(t, ann.presencePush("room1", "leave"), "bob", 1, 1)
}

func TestPresencePermissions(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	anon := e.dial(t, "test", "") // the default role: subscribe, no presence
	anon.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room1"})
	anon.expectError("rtm/subscribe", 2, map[string]any{"channel": "room2", "presence": true}, "authorization_denied")
	anon.expectError("rtm/presence", 3, map[string]any{"channel": "room1"}, "authorization_denied")

	ann := e.member(t, "ann", nil) // presence on room*
	ann.expectError("rtm/subscribe", 2, map[string]any{"channel": "lobby", "presence": true}, "authorization_denied")
	ann.expectError("rtm/presence", 3, map[string]any{"channel": "lobby"}, "authorization_denied")
	ann.expectOK("rtm/subscribe", 4, map[string]any{"channel": "room1", "presence": true})
	// The anonymous subscriber counts as a connection, not a member.
	snap := ann.presencePush("room1", "members")
	if ids := userIDs(snap["members"]); !slices.Equal(ids, []string{"ann"}) || snap["connections"] != json.Number("2") {
		t.Fatalf("snapshot %v: want ann alone and 2 connections", snap)
	}
	// Another guest comes and goes: only the counts change.
	guest := e.dial(t, "test", "")
	guest.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room1"})
	if p := ann.presencePush("room1", "count"); len(p["members"].([]any)) != 0 || p["users"] != json.Number("1") || p["connections"] != json.Number("3") {
		t.Fatalf("a guest came: %v, want no members, 1 user and 3 connections", p)
	}
	guest.expectOK("rtm/unsubscribe", 2, map[string]any{"subscription_id": "room1"})
	if p := ann.presencePush("room1", "count"); p["connections"] != json.Number("2") {
		t.Fatalf("a guest went: %v, want 2 connections", p)
	}
	// The connection stays usable after the refusals (a channel it does
	// not subscribe to: no data to race the reply).
	anon.expectOK("rtm/publish", 5, map[string]any{"channel": "lobby", "message": "still here"})
}

func TestPresenceBadRequests(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	ann := e.member(t, "ann", nil)
	long := string(make([]byte, 300))
	tests := []struct {
		name string
		body map[string]any
		code string
	}{
		{name: "no channel", body: map[string]any{}, code: "invalid_format"},
		{name: "limit too large", body: map[string]any{"channel": "room1", "limit": 1001}, code: "invalid_format"},
		{name: "negative limit", body: map[string]any{"channel": "room1", "limit": -1}, code: "invalid_format"},
		{name: "after too long", body: map[string]any{"channel": "room1", "after": long}, code: "invalid_format"},
		{name: "after not a string", body: map[string]any{"channel": "room1", "after": 7}, code: "invalid_format"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ann.t = t
			ann.expectError("rtm/presence", 10+i, tt.body, tt.code)
		})
	}
	ann.t = t
	ann.expectOK("rtm/presence", 99, map[string]any{"channel": "room1"})
}

func TestPresencePaging(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	users := []string{"eve", "ann", "dan", "bob", "cat"}
	for _, u := range users {
		c := e.member(t, u, nil)
		c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1"})
	}
	asker := e.member(t, "zed", nil) // not in the room
	var got []string
	after := ""
	pages := 0
	for {
		body := map[string]any{"channel": "room1", "limit": 2}
		if after != "" {
			body["after"] = after
		}
		p := asker.expectOK("rtm/presence", 10+pages, body)
		pages++
		if p["users"] != json.Number("5") {
			t.Fatalf("page %d: %v", pages, p)
		}
		for _, m := range p["members"].([]any) {
			got = append(got, m.(map[string]any)["user_id"].(string))
		}
		next, _ := p["next"].(string)
		if next == "" {
			break
		}
		after = next
	}
	if want := []string{"ann", "bob", "cat", "dan", "eve"}; pages != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d pages of %v; want 3 of %v", pages, got, want)
	}
}

func TestPresenceIdentityChanges(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	ann := e.member(t, "ann", nil)
	ann.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1", "presence": true})
	ann.presencePush("room1", "members")
	other := e.member(t, "bob", nil)
	other.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1"})
	wantPushed(t, ann.presencePush("room1", "join"), "bob", 2, 2)
	// A new token for another user: the room sees carl join and bob
	// leave; a role_secret authentication proves no user, so the
	// connection comes in as a guest (a count) and carl leaves.
	other.expectOK("auth/authenticate", 3, jwtBody(presenceToken(t, "carl", nil, "room*")))
	wantPushed(t, ann.presencePush("room1", "join"), "carl", 3, 3)
	wantPushed(t, ann.presencePush("room1", "leave"), "bob", 2, 2)
	nonce := other.handshake(4, "admin")
	other.expectOK("auth/authenticate", 5, authBody(roleHash(adminSecret, nonce)))
	if p := ann.presencePush("room1", "count"); p["connections"] != json.Number("3") {
		t.Fatalf("the guest carl became: %v, want 3 connections", p)
	}
	wantPushed(t, ann.presencePush("room1", "leave"), "carl", 1, 2)
}

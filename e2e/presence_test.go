package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// presenceToken is a JWT for user, with info, that may subscribe to and
// see the presence of "room.*".
func presenceToken(t *testing.T, user, info string) string {
	t.Helper()
	c := auth.Claims{Subject: user, Subscribe: []string{"room.*"}, Presence: []string{"room.*"}, Expires: time.Now().Add(time.Hour)}
	if info != "" {
		c.Info = json.RawMessage(info)
	}
	tok, err := auth.Mint([]byte(jwtSecret), c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// presenceLog turns a presence subscription's callbacks into lines on a
// channel: "members ann,bob", "join bob", "leave bob".
func presenceLog(opts *client.SubscribeOptions) <-chan string {
	ch := make(chan string, 64)
	opts.Presence = true
	opts.OnPresence = func(ev client.PresenceEvent) {
		switch ev.Kind {
		case client.PresenceMembers:
			ch <- fmt.Sprint("members ", memberIDs(ev.Members))
		case client.PresenceJoin:
			ch <- fmt.Sprintf("join %s %v", ev.Members[0].UserID, ev.Members[0].Info)
		case client.PresenceLeave:
			ch <- "leave " + ev.Members[0].UserID
		case client.PresenceCount:
			ch <- fmt.Sprintf("count %d users %d connections", ev.Users, ev.Connections)
		}
	}
	return ch
}

// TestPresenceClient: the Go client's view of a room follows joins and
// leaves, and after a reconnect it hears only what changed while it was
// away, from the edge's new snapshot.
func TestPresenceClient(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	p := newProxy(t, e.hostPort())
	ann := dial(t, p.url(), client.Options{Token: presenceToken(t, "ann", `{"name":"Ann"}`)})
	var opts client.SubscribeOptions
	events := presenceLog(&opts)
	sub, err := ann.Subscribe(ctxFor(t), "room.1", &opts, func(client.Message) {})
	if err != nil {
		t.Fatal(err)
	}
	if got := poll.Recv(t, "the snapshot", events); got != "members [ann]" {
		t.Fatalf("first: %q, want ann alone", got)
	}
	bob := dial(t, e.url, client.Options{Token: presenceToken(t, "bob", `"Bob"`)})
	if _, err := bob.Subscribe(ctxFor(t), "room.1", nil, func(client.Message) {}); err != nil {
		t.Fatal(err)
	}
	if got := poll.Recv(t, "bob's join", events); got != "join bob Bob" {
		t.Fatalf("got %q, want bob's join with his info", got)
	}

	// Ann's network fails; while she is away bob leaves and carl joins.
	p.refuse(true)
	p.cut()
	carl := dial(t, e.url, client.Options{Token: presenceToken(t, "carl", "")})
	if _, err := carl.Subscribe(ctxFor(t), "room.1", nil, func(client.Message) {}); err != nil {
		t.Fatal(err)
	}
	bob.Close()
	p.refuse(false)
	got := []string{poll.Recv(t, "a change after the reconnect", events), poll.Recv(t, "the other change", events)}
	slices.Sort(got)
	if want := []string{"join carl <nil>", "leave bob"}; !slices.Equal(got, want) {
		t.Fatalf("after the reconnect: %q, want %q", got, want)
	}
	ids := memberIDs(sub.Members())
	if !slices.Equal(ids, []string{"ann", "carl"}) {
		t.Fatalf("Members() = %v, want ann and carl", ids)
	}

	// rtm/presence, in pages of one.
	var paged []string
	after := ""
	for {
		page, err := ann.Presence(ctxFor(t), "room.1", after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if page.Users != 2 || page.Connections != 2 {
			t.Fatalf("page counts: %+v", page)
		}
		for _, m := range page.Members {
			paged = append(paged, fmt.Sprintf("%s:%d:%v", m.UserID, m.Connections, m.Info))
		}
		if after = page.Next; after == "" {
			break
		}
	}
	if want := []string{"ann:1:map[name:Ann]", "carl:1:<nil>"}; !slices.Equal(paged, want) {
		t.Fatalf("pages: %q, want %q", paged, want)
	}
	if _, err := carl.Presence(ctxFor(t), "lobby", "", 0); codeOf(err) != "authorization_denied" {
		t.Fatalf("presence of a channel the token does not grant: %v", err)
	}
	// A guest (no token) is counted, not named.
	guest := dial(t, e.url, client.Options{})
	if _, err := guest.Subscribe(ctxFor(t), "room.1", nil, func(client.Message) {}); err != nil {
		t.Fatal(err)
	}
	if got := poll.Recv(t, "the guest's count", events); got != "count 2 users 3 connections" {
		t.Fatalf("a guest came: %q", got)
	}
	if users, conns := sub.PresenceCounts(); users != 2 || conns != 3 || len(sub.Members()) != 2 {
		t.Fatalf("PresenceCounts() = %d, %d with %d members; want 2, 3, 2", users, conns, len(sub.Members()))
	}
}

// memberIDs returns the user ids of ms, in order.
func memberIDs(ms []client.Member) []string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.UserID
	}
	return ids
}

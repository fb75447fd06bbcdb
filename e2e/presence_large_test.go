package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// TestPresenceLargeRoomClient: the Go client subscribing with presence
// to a room of 10,000 members with 100 bytes of info each (more than its
// connection's 1 MiB queue holds) stays connected, pages the members the
// snapshot leaves out, and hears them once, complete; members joining and
// leaving meanwhile (here and, as a cluster's other edges' do, in the
// registry) make no difference: the members heard, then the joins and
// leaves heard after them, are the room, and so is Members().
func TestPresenceLargeRoomClient(t *testing.T) {
	t.Parallel()
	reg := presence.New()
	e := startEdgeWith(t, edgeConfig{mutate: func(o *server.Options) { o.Presence = reg }})
	const room, n = "e2e\x00room.big", 10_000
	info := strings.Repeat("i", 98) // 100 bytes of JSON
	for i := range n {
		reg.Add(room, fmt.Sprintf("user-%05d", i), info)
	}
	ann := dial(t, e.url, client.Options{Token: presenceToken(t, "ann", "")})

	var mu sync.Mutex
	heard := map[string]bool{} // the members event, then each join and leave
	snapshots := 0
	opts := client.SubscribeOptions{Presence: true, OnPresence: func(ev client.PresenceEvent) {
		mu.Lock()
		defer mu.Unlock()
		switch ev.Kind {
		case client.PresenceMembers:
			snapshots++
			for _, m := range ev.Members {
				heard[m.UserID] = true
			}
		case client.PresenceJoin:
			heard[ev.Members[0].UserID] = true
		case client.PresenceLeave:
			delete(heard, ev.Members[0].UserID)
		}
	}}
	sub, err := ann.Subscribe(ctxFor(t), "room.big", &opts, func(client.Message) {})
	if err != nil {
		t.Fatal(err)
	}
	// While the client pages: members before and after its cursor come
	// and go, and a real connection joins.
	reg.Remove(room, "user-00001")
	reg.Remove(room, fmt.Sprintf("user-%05d", n-1))
	reg.Add(room, "zz-late", info)
	bob := dial(t, e.url, client.Options{Token: presenceToken(t, "bob", "")})
	if _, err := bob.Subscribe(ctxFor(t), "room.big", nil, func(client.Message) {}); err != nil {
		t.Fatal(err)
	}
	reg.Remove(room, fmt.Sprintf("user-%05d", n/2))

	want := roomMembers(reg, room)
	poll.UntilNil(t, "the client's members to be the room's", func() error {
		mu.Lock()
		defer mu.Unlock()
		if got := slices.Sorted(maps.Keys(heard)); !slices.Equal(got, want) {
			return fmt.Errorf("heard %d members, the room has %d", len(got), len(want))
		}
		if got := memberIDs(sub.Members()); !slices.Equal(got, want) {
			return fmt.Errorf("Members() has %d, the room %d", len(got), len(want))
		}
		return nil
	})
	mu.Lock()
	defer mu.Unlock()
	if snapshots != 1 {
		t.Fatalf("the members were heard %d times, want once", snapshots)
	}
	if users, _ := sub.PresenceCounts(); users != len(want) {
		t.Fatalf("PresenceCounts() users = %d, want %d", users, len(want))
	}
	if err := sub.Err(); err != nil || !slices.Contains(want, "bob") || !slices.Contains(want, "zz-late") {
		t.Fatalf("subscription error %v; bob and zz-late in the room: %v %v", err, slices.Contains(want, "bob"), slices.Contains(want, "zz-late"))
	}
}

// roomMembers lists a registry room's user ids, in order.
func roomMembers(reg *presence.Registry, room string) []string {
	var out []string
	for p, next := reg.Members(room, "", presence.MaxPage), ""; ; p = reg.Members(room, next, presence.MaxPage) {
		for _, m := range p.Members {
			out = append(out, m.UserID)
		}
		if next = p.Next; next == "" {
			return out
		}
	}
}

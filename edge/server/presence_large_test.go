package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/server"
)

// TestPresenceLargeRoom: a newcomer to a room larger than its queue
// holds (10,000 members with 100 bytes of info each: 1.3 MB of members
// against the default 1 MiB queue) is not closed. Its snapshot is the
// room's first members in user id order, cut to a quarter of the queue,
// with more: true; it pages the rest with rtm/presence from the last one,
// while members join and leave before and after its cursor, on other
// connections and (as a cluster's other edges' do) in the registry. The
// snapshot, the pages and the joins and leaves, applied in the order they
// come, are the room's members exactly.
func TestPresenceLargeRoom(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		members    int
		infoBytes  int
		queueBytes int // 0: the default, 1 MiB
	}{
		{name: "10,000 members with 100-byte info", members: 10_000, infoBytes: 100},
		{name: "4 KB of info each, a 256 KiB queue", members: 1_000, infoBytes: 4000, queueBytes: 256 << 10},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := presence.New()
			e := startEdge(t, func(o *server.Options) {
				o.Presence = reg
				o.Limits.QueueBytes = tt.queueBytes
			})
			budget := 1 << 20 / 4
			if tt.queueBytes > 0 {
				budget = tt.queueBytes / 4
			}
			const room = "test\x00room1"
			info := strings.Repeat("i", tt.infoBytes-2) // a JSON string of infoBytes
			for i := range tt.members {
				reg.Add(room, fmt.Sprintf("user-%05d", i), info)
			}
			ann := e.member(t, "ann", nil)
			ann.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1", "presence": true})
			snap := ann.recv()
			if snap.Action != "rtm/subscription/presence" || snap.Body["event"] != "members" || snap.Body["more"] != true {
				t.Fatalf("snapshot %s %v...: want members with more", snap.Action, snap.Body["event"])
			}
			if n, _ := json.Marshal(snap.Body); len(n) > budget {
				t.Fatalf("the snapshot is %d bytes, past the budget of %d", len(n), budget)
			}
			known := map[string]bool{}
			ids := userIDs(snap.Body["members"])
			if !slices.IsSorted(ids) || ids[0] != "ann" || len(ids) > presence.SnapshotPage {
				t.Fatalf("the snapshot's %d members do not start the room in order: %v...", len(ids), ids[:2])
			}
			for _, id := range ids {
				known[id] = true
			}
			after := ids[len(ids)-1]

			// Changes while the newcomer pages: real connections come and
			// go, and members of other nodes, before and after the cursor.
			var conns []*rawClient
			changes := []func(){
				func() { reg.Remove(room, "user-00001") },                           // in the snapshot
				func() { reg.Remove(room, fmt.Sprintf("user-%05d", tt.members-1)) }, // not paged yet
				func() { conns = append(conns, e.joined(t, "bob")) },                // before the cursor
				func() { reg.Add(room, "zz-late", info) },                           // after it
				func() { conns[0].ws.CloseNow() },                                   // bob leaves (a reset)
				func() { conns = append(conns, e.joined(t, "user-00002x")) },
				func() { reg.Remove(room, fmt.Sprintf("user-%05d", tt.members/2)) },
			}
			pages := 0
			for id := 100; after != ""; id++ {
				if pages < len(changes) {
					changes[pages]()
				}
				pages++
				ann.send("rtm/presence", id, map[string]any{"channel": "room1", "after": after, "limit": 1000})
				for {
					p := ann.recv()
					if p.Action == "rtm/subscription/presence" {
						applyPush(t, known, p.Body)
						continue
					}
					if p.Action != "rtm/presence/ok" || p.ID.(json.Number).String() != itoa(id) {
						t.Fatalf("page %d: got %s %v", pages, p.Action, p.Body)
					}
					if n, _ := json.Marshal(p.Body); len(n) > budget {
						t.Fatalf("page %d is %d bytes, past the budget of %d", pages, len(n), budget)
					}
					for _, id := range userIDs(p.Body["members"]) {
						known[id] = true
					}
					after, _ = p.Body["next"].(string)
					break
				}
			}
			for _, c := range changes[min(pages, len(changes)):] {
				c()
			}
			// A last request, answered after every push before it.
			ann.send("rtm/presence", 1, map[string]any{"channel": "room1", "limit": 1})
			for p := ann.recv(); p.Action != "rtm/presence/ok"; p = ann.recv() {
				applyPush(t, known, p.Body)
			}
			var want []string
			for p, next := reg.Members(room, "", presence.MaxPage), ""; ; p = reg.Members(room, next, presence.MaxPage) {
				for _, m := range p.Members {
					want = append(want, m.UserID)
				}
				if next = p.Next; next == "" {
					break
				}
			}
			got := slices.Sorted(maps.Keys(known))
			if !slices.Equal(got, want) {
				t.Fatalf("snapshot, pages and pushes give %d members, the room has %d (first difference %s)",
					len(got), len(want), firstDiff(got, want))
			}
			if pages < 2 || !slices.Contains(got, "zz-late") || slices.Contains(got, "bob") || slices.Contains(got, "user-00001") {
				t.Fatalf("%d pages; the changes did not all happen: zz-late %v, bob %v, user-00001 %v", pages,
					slices.Contains(got, "zz-late"), slices.Contains(got, "bob"), slices.Contains(got, "user-00001"))
			}
		})
	}
}

// joined dials user into room1 (a member, not watching).
func (e *edge) joined(t *testing.T, user string) *rawClient {
	t.Helper()
	c := e.member(t, user, nil)
	c.expectOK("rtm/subscribe", 2, map[string]any{"channel": "room1"})
	return c
}

// applyPush applies a join or leave push to a member set; count pushes
// change no member.
func applyPush(t *testing.T, known map[string]bool, body map[string]any) {
	t.Helper()
	switch body["event"] {
	case "join":
		for _, id := range userIDs(body["members"]) {
			known[id] = true
		}
	case "leave":
		for _, id := range userIDs(body["members"]) {
			delete(known, id)
		}
	case "count":
	default:
		t.Fatalf("unexpected presence push %v", body)
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + " / " + b[i]
		}
	}
	return "at the end"
}

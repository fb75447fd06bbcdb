package presence_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/presence"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a watcher that writes down what it is told, as lines.
type recorder struct {
	log      []string
	snapshot []string // user ids of the snapshot pages
	pages    int
}

func (r *recorder) PresenceSnapshot(room string, members []presence.Member, more bool, users, conns int) {
	r.pages++
	for _, m := range members {
		r.snapshot = append(r.snapshot, m.UserID)
	}
	r.log = append(r.log, fmt.Sprintf("snapshot %s %d more=%v users=%d conns=%d", room, len(members), more, users, conns))
}

func (r *recorder) PresenceChanged(ev *presence.Event) {
	r.log = append(r.log, fmt.Sprintf("%s %s %s info=%v users=%d conns=%d", ev.Kind, ev.Room, ev.Member.UserID, ev.Member.Info, ev.Users, ev.Connections))
}

func TestOneMemberPerUser(t *testing.T) {
	r := presence.New()
	w := &recorder{}
	r.Watch("lobby", w)
	r.Add("lobby", "ann", "Ann")
	r.Add("lobby", "ann", "Ann on her phone") // a second connection: no event
	r.Add("lobby", "", nil)                   // anonymous: counted, a count event
	if u, c := r.Stats("lobby"); u != 1 || c != 3 {
		t.Fatalf("stats = %d users, %d conns; want 1, 3", u, c)
	}
	r.Remove("lobby", "ann")
	r.Remove("lobby", "")
	r.Remove("lobby", "ann") // the last connection: leave
	r.Remove("lobby", "ann") // nothing left to remove
	want := []string{
		"snapshot lobby 0 more=false users=0 conns=0",
		"join lobby ann info=Ann users=1 conns=1",
		"count lobby  info=<nil> users=1 conns=3",
		"count lobby  info=<nil> users=1 conns=1",
		"leave lobby ann info=Ann users=0 conns=0",
	}
	if !slices.Equal(w.log, want) {
		t.Fatalf("events:\n%q\nwant\n%q", w.log, want)
	}
	if u, c := r.Stats("lobby"); u != 0 || c != 0 {
		t.Fatalf("stats after = %d, %d", u, c)
	}
}

// TestSnapshotThenDeltas: a watch of a room larger than the snapshot
// gets its first SnapshotPage members in user id order with more=true;
// the changes after it and the pages read with MembersFunc (in order with
// them) make up exactly the room, whatever joins and leaves meanwhile,
// before or after the pages' cursor.
func TestSnapshotThenDeltas(t *testing.T) {
	r := presence.New()
	const n = 2*presence.SnapshotPage + 7
	for i := range n {
		r.Add("big", fmt.Sprintf("u%05d", i), nil)
	}
	w := &recorder{}
	r.Watch("big", w)
	want := fmt.Sprintf("snapshot big %d more=true users=%d conns=%d", presence.SnapshotPage, n, n)
	if w.pages != 1 || len(w.log) != 1 || w.log[0] != want {
		t.Fatalf("snapshot %q in %d calls, want %q", w.log, w.pages, want)
	}
	if w.snapshot[0] != "u00000" || w.snapshot[len(w.snapshot)-1] != fmt.Sprintf("u%05d", presence.SnapshotPage-1) ||
		!slices.IsSorted(w.snapshot) {
		t.Fatalf("the snapshot is not the room's first members in order: %q...", w.snapshot[:3])
	}
	known := map[string]bool{}
	for _, u := range w.snapshot {
		known[u] = true
	}
	apply := func() { // the changes heard since the last call
		for _, line := range w.log[1:] {
			var kind, room, user string
			fmt.Sscanf(line, "%s %s %s", &kind, &room, &user)
			known[user] = kind == "join"
			if kind == "leave" {
				delete(known, user)
			}
		}
		w.log = w.log[:1]
	}
	after := w.snapshot[len(w.snapshot)-1]
	changes := []func(){
		func() { r.Add("big", "newcomer", nil) }, // sorts before the cursor
		func() { r.Remove("big", "u00003") },     // in the snapshot
		func() { r.Remove("big", "u00700") },     // not paged yet
		func() { r.Add("big", "v-late", nil) },   // after the cursor
		func() { r.Remove("big", "u00600") },     // once paged (below)
		func() { r.Add("big", "u00600x", nil) },
	}
	next := 0 // the next change to make
	for after != "" {
		if next < len(changes) {
			changes[next]()
			next++
		}
		apply()
		r.MembersFunc("big", after, 100, func(p *presence.Page) {
			for _, m := range p.Members {
				known[m.UserID] = true
			}
			after = p.Next
		})
	}
	for _, c := range changes[next:] { // those the pages did not outlast
		c()
	}
	apply()
	var got []string
	for u := range known {
		got = append(got, u)
	}
	slices.Sort(got)
	var room []string
	for p, next := r.Members("big", "", presence.MaxPage), ""; ; p = r.Members("big", next, presence.MaxPage) {
		for _, m := range p.Members {
			room = append(room, m.UserID)
		}
		if next = p.Next; next == "" {
			break
		}
	}
	if !slices.Equal(got, room) {
		t.Fatalf("snapshot, changes and pages give %d members, the room has %d", len(got), len(room))
	}
	if u, _ := r.Stats("big"); u != len(room) || slices.Contains(room, "u00003") || !slices.Contains(room, "v-late") {
		t.Fatalf("the room is not what the changes made it: %d users", u)
	}
	r.Unwatch("big", w)
	r.Add("big", "late", nil)
	if len(w.log) != 1 {
		t.Fatalf("an unwatched watcher got %q", w.log[1:])
	}
}

// TestMembersOrder: pages of any size walk a room in user id order, each
// member once.
func TestMembersOrder(t *testing.T) {
	r := presence.New()
	var ids []string
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		id := strconv.FormatUint(rng.Uint64(), 36)
		ids = append(ids, id)
		r.Add("room", id, nil)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	for _, limit := range []int{1, 7, 100, 999, presence.MaxPage} {
		var got []string
		for p, n := r.Members("room", "", limit), 0; ; p = r.Members("room", got[len(got)-1], limit) {
			if len(p.Members) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(p.Members))
			}
			for _, m := range p.Members {
				got = append(got, m.UserID)
			}
			if n++; p.Next == "" || n > len(ids) {
				break
			}
		}
		if !slices.Equal(got, ids) {
			t.Fatalf("limit %d: %d members in pages, want %d in order", limit, len(got), len(ids))
		}
	}
}

func TestMembersPages(t *testing.T) {
	r := presence.New()
	for _, u := range []string{"e", "a", "d", "b", "c"} {
		r.Add("room", u, u+"-info")
	}
	r.Add("room", "c", nil)
	var got []string
	after := ""
	pages := 0
	for {
		p := r.Members("room", after, 2)
		pages++
		if p.Users != 5 || p.Connections != 6 {
			t.Fatalf("page counts %d, %d", p.Users, p.Connections)
		}
		for _, m := range p.Members {
			got = append(got, fmt.Sprintf("%s:%v:%d", m.UserID, m.Info, m.Connections))
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	want := []string{"a:a-info:1", "b:b-info:1", "c:c-info:2", "d:d-info:1", "e:e-info:1"}
	if pages != 3 || !slices.Equal(got, want) {
		t.Fatalf("%d pages %q, want 3 %q", pages, got, want)
	}
	if p := r.Members("nobody-here", "", 0); len(p.Members) != 0 || p.Next != "" || p.Users != 0 {
		t.Fatalf("an empty room's page: %+v", p)
	}
}

func TestRemoteNodes(t *testing.T) {
	r := presence.New()
	w := &recorder{}
	r.Watch("room", w)
	r.Add("room", "ann", nil)
	r.SetRemote("room", "edge-b", "ann", nil, 2) // also elsewhere: no event
	r.SetRemote("room", "edge-c", "bob", "B", 1)
	r.SetRemote("room", "edge-c", "bob", "B", 2) // a second connection there: no event
	if u, c := r.Stats("room"); u != 2 || c != 5 {
		t.Fatalf("stats = %d, %d; want 2, 5", u, c)
	}
	r.Remove("room", "ann") // still on edge-b
	r.DropNode("edge-b")    // ann leaves; bob is on edge-c
	r.SetRemote("room", "edge-c", "bob", nil, 0)
	want := []string{
		"snapshot room 0 more=false users=0 conns=0",
		"join room ann info=<nil> users=1 conns=1",
		"join room bob info=B users=2 conns=4",
		"leave room ann info=<nil> users=1 conns=2",
		"leave room bob info=B users=0 conns=0",
	}
	if !slices.Equal(w.log, want) {
		t.Fatalf("events:\n%q\nwant\n%q", w.log, want)
	}
}

// BenchmarkJoinLeave measures what a member's join and leave cost the
// registry, in a room of 10,000 members, with no watcher and with 100
// (which each get the event).
func BenchmarkJoinLeave(b *testing.B) {
	for _, watchers := range []int{0, 100} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			r := presence.New()
			for i := range 10_000 {
				r.Add("room", fmt.Sprintf("user-%d", i), nil)
			}
			var count counter
			for range watchers {
				r.Watch("room", &count)
			}
			users := make([]string, 1024)
			for i := range users {
				users[i] = fmt.Sprintf("newcomer-%d", i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				u := users[i%len(users)]
				r.Add("room", u, nil)
				r.Remove("room", u)
			}
			b.StopTimer()
			if want := 2 * b.N * watchers; count.events != want {
				b.Fatalf("watchers got %d events, want %d", count.events, want)
			}
		})
	}
}

// counter is a watcher that counts events.
type counter struct{ events int }

func (c *counter) PresenceSnapshot(string, []presence.Member, bool, int, int) {}
func (c *counter) PresenceChanged(*presence.Event)                            { c.events++ }

package presence_test

import (
	"fmt"
	"slices"
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

func TestSnapshotThenDeltas(t *testing.T) {
	r := presence.New()
	const n = 2*presence.SnapshotPage + 7
	for i := range n {
		r.Add("big", fmt.Sprintf("u%05d", i), nil)
	}
	w := &recorder{}
	r.Watch("big", w)
	if w.pages != 3 || len(w.snapshot) != n {
		t.Fatalf("snapshot: %d pages, %d members; want 3, %d", w.pages, len(w.snapshot), n)
	}
	slices.Sort(w.snapshot)
	if w.snapshot[0] != "u00000" || w.snapshot[n-1] != fmt.Sprintf("u%05d", n-1) || len(slices.Compact(w.snapshot)) != n {
		t.Fatalf("snapshot members are not the room's")
	}
	wantHead := []string{
		fmt.Sprintf("snapshot big %d more=true users=%d conns=%d", presence.SnapshotPage, n, n),
		fmt.Sprintf("snapshot big %d more=true users=%d conns=%d", presence.SnapshotPage, n, n),
		fmt.Sprintf("snapshot big 7 more=false users=%d conns=%d", n, n),
	}
	if !slices.Equal(w.log, wantHead) {
		t.Fatalf("snapshot pages:\n%q\nwant\n%q", w.log, wantHead)
	}
	r.Add("big", "newcomer", nil)
	r.Remove("big", "u00003")
	tail := w.log[3:]
	want := []string{
		fmt.Sprintf("join big newcomer info=<nil> users=%d conns=%d", n+1, n+1),
		fmt.Sprintf("leave big u00003 info=<nil> users=%d conns=%d", n, n),
	}
	if !slices.Equal(tail, want) {
		t.Fatalf("deltas %q, want %q", tail, want)
	}
	r.Unwatch("big", w)
	r.Add("big", "late", nil)
	if len(w.log) != 5 {
		t.Fatalf("an unwatched watcher got %q", w.log[5:])
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

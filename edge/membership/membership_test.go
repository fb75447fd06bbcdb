package membership

import (
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/internal/wstest"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connection returns a connection's delivery side on a real loopback
// WebSocket, over a store; it closes when tb ends.
func connection(tb testing.TB) (*delivery.Conn, *store.Store) {
	tb.Helper()
	st := store.New(&store.Options{})
	tb.Cleanup(func() { st.Close() })
	eng := delivery.New(&delivery.Config{Store: st, Counters: &tally.Counters{},
		Logger: slog.New(slog.DiscardHandler), QueueBytes: 1 << 20, PrefixChannels: 16})
	ws := wstest.ServerSide(tb)
	c := &delivery.Conn{}
	c.Init(eng, ws, "edge.1", "127.0.0.1:1", &tally.App{}, nil)
	tb.Cleanup(func() {
		c.CloseWith(websocket.StatusNormalClosure, "")
		c.End()
	})
	return c, st
}

// TestSyncFollowsSubscriptions: the connection is in the room of each
// channel it has a live subscription to, as its user of the moment, and
// in no room once it leaves.
func TestSyncFollowsSubscriptions(t *testing.T) {
	c, st := connection(t)
	reg := presence.New()
	a := &app.App{Key: "k"}
	var p Presence
	p.Init(c, reg, a, nil, 1<<20, slog.New(slog.DiscardHandler))
	members := func() []string {
		var ids []string
		for _, m := range reg.Members(a.StoreKey("news"), "", 10).Members {
			ids = append(ids, m.UserID)
		}
		return ids
	}
	check := func(step string, users, conns int, ids ...string) {
		t.Helper()
		u, n := reg.Stats(a.StoreKey("news"))
		if got := members(); u != users || n != conns || strings.Join(got, ",") != strings.Join(ids, ",") {
			t.Fatalf("%s: %d users %v, %d connections; want %d %v, %d", step, u, got, n, users, ids, conns)
		}
	}
	p.SetUser("ada", nil, false)
	check("before subscribing", 0, 0)
	cur, err := st.Subscribe(a.StoreKey("news"), store.Start{})
	if err != nil {
		t.Fatal(err)
	}
	c.HandOver(&delivery.Subscription{ID: "news", Channel: "news", Cursor: cur}, nil, nil, false)
	p.Sync()
	check("subscribed", 1, 1, "ada")
	p.SetUser("bob", nil, true)
	check("a token named another user", 1, 1, "bob")
	p.EndGrantUser()
	check("the token ended", 0, 1)
	if !c.Unsubscribe("news", rtm.ID{}) {
		t.Fatal("no live subscription news")
	}
	p.Sync()
	check("unsubscribed", 0, 0)
	p.Leave()
	if p.User() != "" {
		t.Fatalf("user %q after the grant's end, want anonymous", p.User())
	}
}

// TestFit cuts a page to the budget, never below one member.
func TestFit(t *testing.T) {
	ms := make([]rtm.PresenceMember, 100)
	for i := range ms {
		ms[i].UserID = strings.Repeat("u", 10)
	}
	encode := func(ms []rtm.PresenceMember) ([]byte, error) { return make([]byte, 10*len(ms)), nil }
	for _, tt := range []struct{ budget, max int }{{10_000, 1000}, {500, 500}, {5, 10}} {
		frame, err := Fit(ms, tt.budget, encode)
		if err != nil || len(frame) > tt.max || len(frame) == 0 {
			t.Errorf("budget %d: %d bytes (%v), want 1 to %d", tt.budget, len(frame), err, tt.max)
		}
	}
}

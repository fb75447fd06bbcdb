package deadman

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestSwitchKeepsTheNewest: of two switches on a channel, the one armed by
// the later message stays armed, whichever comes first (two publishes
// with ttl race to arm, a publish's answer follows the feed's news of a
// later one), and of one message's switch the edge's own beats the
// standby the log announces.
func TestSwitchKeepsTheNewest(t *testing.T) {
	st := store.New(&store.Options{SweepInterval: -1})
	defer st.Close()
	pos := func(o uint64) rtm.Position { return rtm.Position{Epoch: 7, Offset: o} }
	type arming struct {
		offset  uint64
		standby bool
	}
	for _, tc := range []struct {
		name string
		in   []arming
		want arming
	}{
		{"later first", []arming{{6, false}, {5, false}}, arming{6, false}},
		{"later second", []arming{{5, false}, {6, false}}, arming{6, false}},
		{"own after its standby", []arming{{5, true}, {5, false}}, arming{5, false}},
		{"standby after its own", []arming{{5, false}, {5, true}}, arming{5, false}},
		{"a later standby replaces", []arming{{5, false}, {6, true}}, arming{6, true}},
		{"an older own one does not", []arming{{6, true}, {5, false}}, arming{6, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw := New(st, chanlog.NewMemory(st))
			defer sw.Close()
			for _, a := range tc.in {
				sw.set("k", &armedSwitch{at: pos(a.offset), standby: a.standby}, time.Hour)
			}
			sw.mu.Lock()
			got := sw.armed["k"]
			sw.mu.Unlock()
			if got == nil || got.at != pos(tc.want.offset) || got.standby != tc.want.standby {
				t.Fatalf("armed %+v, want the switch of offset %d (standby %v)", got, tc.want.offset, tc.want.standby)
			}
		})
	}
}

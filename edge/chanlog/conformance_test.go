package chanlog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/chanlog/chanlogtest"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/store/storetest"
)

// group is the server's grouping of keys: the appkey before the NUL.
func group(key string) string { g, _, _ := strings.Cut(key, "\x00"); return g }

// newStore returns a store on a clock the test moves, with retention.
func newStore(t *testing.T, retention func(string) store.Retention, epoch uint64) (*store.Store, *storetest.Clock) {
	clock := storetest.NewClock(time.Now())
	st := store.New(&store.Options{Clock: clock, Retention: retention, Group: group, Epoch: epoch, SweepInterval: -1})
	t.Cleanup(func() { st.Close() })
	return st, clock
}

// The memory log: an edge alone.
func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	chanlogtest.Run(t, func(t *testing.T, retention func(string) store.Retention) chanlogtest.Env {
		st, clock := newStore(t, retention, 0)
		return chanlogtest.Env{Log: chanlog.NewMemory(st), Store: st, Clock: clock}
	})
}

// The journaled log: a durable edge on a real JetStream node, its store
// the journal's replica.
func TestJournaledConformance(t *testing.T) {
	t.Parallel()
	chanlogtest.Run(t, journaled(nil))
}

// The journaled log fed by interest: the store holds the channels the
// log's requests and subscriptions follow, no other.
func TestJournaledByInterestConformance(t *testing.T) {
	t.Parallel()
	chanlogtest.Run(t, journaled(&journal.Options{Interest: true}))
}

// journaled returns the environments of a journaled log with opts.
func journaled(opts *journal.Options) func(t *testing.T, retention func(string) store.Retention) chanlogtest.Env {
	return func(t *testing.T, retention func(string) store.Retention) chanlogtest.Env {
		j := journaltest.Open(t, journaltest.Node(t), opts)
		st, clock := newStore(t, retention, j.Epoch())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := j.Start(ctx, st); err != nil {
			t.Fatal(err)
		}
		select {
		case <-j.CaughtUp():
		case <-ctx.Done():
			t.Fatal("the journal's feed did not catch up within 30s")
		}
		l := chanlog.NewJournaled(chanlog.JournalConfig{Journal: j, Store: st, Retention: retention,
			Group: group, Log: journaltest.Logger()})
		return chanlogtest.Env{Log: l, Store: st, Clock: clock}
	}
}

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

// newStore returns a store on a clock the test moves, with retention: a
// replica of parts (nil: standalone).
func newStore(t *testing.T, retention func(string) store.Retention, parts *store.Partitions) (*store.Store, *storetest.Clock) {
	clock := storetest.NewClock(time.Now())
	st := store.New(&store.Options{Clock: clock, Retention: retention, Group: group, Partitions: parts, SweepInterval: -1})
	t.Cleanup(func() { st.Close() })
	return st, clock
}

// The memory log: an edge alone.
func TestMemoryConformance(t *testing.T) {
	t.Parallel()
	chanlogtest.Run(t, func(t *testing.T, retention func(string) store.Retention) chanlogtest.Env {
		st, clock := newStore(t, retention, nil)
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

// The journaled log in four partitions, each its own stream, fed by
// interest (the cluster's default): a channel's reads, writes and
// subscriptions go to its partition's stream, and its positions are
// that stream's.
func TestJournaledPartitionedConformance(t *testing.T) {
	t.Parallel()
	chanlogtest.Run(t, journaled(&journal.Options{Interest: true, Partitions: 4}))
}

// journaled returns the environments of a journaled log with opts.
func journaled(opts *journal.Options) func(t *testing.T, retention func(string) store.Retention) chanlogtest.Env {
	return func(t *testing.T, retention func(string) store.Retention) chanlogtest.Env {
		n := journaltest.Node(t)
		o := journal.Options{}
		if opts != nil {
			o = *opts
		}
		js := make([]chanlog.Journal, max(o.Partitions, 1))
		for p := range js {
			o.Partition = p
			js[p] = journaltest.Open(t, n, &o)
		}
		st, clock := newStore(t, retention, chanlog.StorePartitions(js))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, j := range js {
			j := j.(*journal.Journal)
			if err := j.Start(ctx, st); err != nil {
				t.Fatal(err)
			}
			select {
			case <-j.CaughtUp():
			case <-ctx.Done():
				t.Fatal("the journal's feed did not catch up within 30s")
			}
		}
		l := chanlog.NewJournaled(chanlog.JournalConfig{Journals: js, Store: st, Retention: retention,
			Log: journaltest.Logger()})
		return chanlogtest.Env{Log: l, Store: st, Clock: clock}
	}
}

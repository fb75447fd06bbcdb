package chanlog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/store"
)

// An app's channel limit counts its channels in every partition, once:
// a new channel is counted as about to be made in its own partition
// only (counting it in each would refuse channels under the limit).
func TestChannelLimitAcrossPartitions(t *testing.T) {
	for _, k := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", k), func(t *testing.T) {
			env := journaled(&journal.Options{Interest: true, Partitions: k})(t, func(string) store.Retention { return store.Retention{} })
			const limit = 4
			publish := func(name string) error {
				_, p, err := env.Log.Channel("app\x00" + name).Append(chanlog.Message{Payload: []byte(`"x"`), Limit: limit})
				if err != nil {
					return err
				}
				_, err = p.Wait(t.Context())
				return err
			}
			for _, name := range []string{"a", "b", "c", "d"} {
				if err := publish(name); err != nil {
					t.Fatalf("channel %s, within the limit of %d: %v", name, limit, err)
				}
			}
			if err := publish("e"); err == nil {
				t.Fatalf("a fifth channel passed the limit of %d", limit)
			}
		})
	}
}

// Windows is what every channel gets: in a log whose partitions' streams
// keep messages for different times (one edited apart), the shortest
// retention, not the first partition's.
func TestWindowsOfPartitions(t *testing.T) {
	n := journaltest.Node(t)
	js := make([]chanlog.Journal, 2)
	for p, age := range []time.Duration{time.Hour, 30 * time.Minute} {
		js[p] = journaltest.Open(t, n, &journal.Options{Partitions: 2, Partition: p, MaxAge: age})
	}
	st, _ := newStore(t, func(string) store.Retention { return store.Retention{} }, chanlog.StorePartitions(js))
	l := chanlog.NewJournaled(chanlog.JournalConfig{Journals: js, Store: st, Log: journaltest.Logger()})
	if got := l.Windows().Retention; got != 30*time.Minute {
		t.Fatalf("retention %v, want the shorter partition's 30m", got)
	}
}

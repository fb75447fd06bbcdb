package journal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
)

// openErr opens a journal of partition p of k on n and returns Open's
// error (the journal, if one opened, is closed at the test's end).
func openErr(t *testing.T, n *journal.Node, k, p int) error { return openNamed(t, n, "", k, p) }

// A log keeps the partitions it was made with: opening it with another
// count is refused at once, with an error that says what was found and
// how to change it, whichever way the count changes.
func TestPartitionsAreFixedWhenTheLogIsMade(t *testing.T) {
	for _, tc := range []struct{ made, asked int }{{1, 4}, {4, 1}, {4, 2}, {2, 4}} {
		t.Run(fmt.Sprintf("%d to %d", tc.made, tc.asked), func(t *testing.T) {
			n := journaltest.Node(t)
			for p := range tc.made {
				if err := openErr(t, n, tc.made, p); err != nil {
					t.Fatalf("making partition %d of %d: %v", p, tc.made, err)
				}
			}
			start := time.Now()
			err := openErr(t, n, tc.asked, 0)
			if !errors.Is(err, journal.ErrPartitions) {
				t.Fatalf("opening with %d partitions a log made with %d: err = %v, want ErrPartitions", tc.asked, tc.made, err)
			}
			if waited := time.Since(start); waited > 10*time.Second {
				t.Fatalf("the refusal took %v: it was retried", waited)
			}
			for _, want := range []string{fmt.Sprintf("cluster.partitions is %d", tc.asked), "cluster.stream", "docs/cluster.md"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			// The log's own count still opens.
			if err := openErr(t, n, tc.made, 0); err != nil {
				t.Fatalf("reopening with %d partitions: %v", tc.made, err)
			}
		})
	}
}

// In a three-node cluster, a log of four partitions has its streams'
// leaders spread over the nodes: every node leads one at least, though
// JetStream elects each stream's leader on its own. Here every leader is
// first moved to one node, as after the other two restarted.
func TestPartitionLeadersSpread(t *testing.T) {
	nodes := journaltest.Cluster(t, 3)
	const k = 4
	nc, err := nodes[0].Connect("spread-watch")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	for p := range k {
		journaltest.Open(t, nodes[0], &journal.Options{Partitions: k, Partition: p, Replicas: 3})
	}
	one := nodes[0].Server().Name()
	poll.Within(t, 30*time.Second, "every partition led by "+one, func() bool {
		for p := range k {
			stepDownTo(t, nc, journal.StreamOf(journal.DefaultStream, k, p), one)
		}
		return streamLeaders(t, js, k)[one] == k
	})
	for _, n := range nodes {
		var js []*journal.Journal
		parts := &store.Partitions{Of: func(string) int { return 0 }}
		for p := range k {
			j := journaltest.Open(t, n, &journal.Options{Partitions: k, Partition: p, Replicas: 3, Interest: true})
			js, parts.Epochs = append(js, j), append(parts.Epochs, j.Epoch())
		}
		st := store.New(&store.Options{Partitions: parts})
		t.Cleanup(func() { st.Close() })
		for _, j := range js {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := j.Start(ctx, st)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var leaders map[string]int
	poll.Within(t, 30*time.Second, "every node to lead a partition", func() bool {
		leaders = streamLeaders(t, js, k)
		return len(leaders) == len(nodes)
	})
	t.Logf("leaders: %v", leaders)
}

// stepDownTo asks stream's leader to hand the lead to server (an error,
// such as server leading already, is the next poll's to see).
func stepDownTo(t *testing.T, nc *nats.Conn, stream, server string) {
	t.Helper()
	req := fmt.Sprintf(`{"placement":{"preferred":%q}}`, server)
	if _, err := nc.Request("$JS.API.STREAM.LEADER.STEPDOWN."+stream, []byte(req), 2*time.Second); err != nil {
		t.Logf("step down %s: %v", stream, err)
	}
}

// streamLeaders counts the partitions each server leads.
func streamLeaders(t *testing.T, js jetstream.JetStream, k int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for p := range k {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := js.Stream(ctx, journal.StreamOf(journal.DefaultStream, k, p))
		cancel()
		if err != nil || s.CachedInfo().Cluster == nil || s.CachedInfo().Cluster.Leader == "" {
			continue
		}
		out[s.CachedInfo().Cluster.Leader]++
	}
	return out
}

// The way docs/cluster.md gives to change the count works: a log of
// another count under a new cluster.stream beside the old one (their
// subjects do not overlap). A stream under the subjects of one already
// on the server is refused at once, saying so.
func TestNewPartitionCountUnderNewName(t *testing.T) {
	n := journaltest.Node(t)
	if err := openErr(t, n, 1, 0); err != nil {
		t.Fatal(err)
	}
	for p := range 4 {
		if err := openNamed(t, n, "NEW", 4, p); err != nil {
			t.Fatalf("partition %d of 4 beside a log of 1: %v", p, err)
		}
	}
	if err := openNamed(t, n, "THIRD", 1, 0); !errors.Is(err, journal.ErrOverlap) {
		t.Fatalf("a second log of one partition (sluice.>) on the server: err = %v, want ErrOverlap", err)
	}
}

// openNamed is openErr for the log named stream ("": the default).
func openNamed(t *testing.T, n *journal.Node, stream string, k, p int) error {
	t.Helper()
	nc, err := n.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j, err := journal.Open(ctx, nc, &journal.Options{Stream: stream, Partitions: k, Partition: p, Logger: journaltest.Logger()})
	if err == nil {
		t.Cleanup(j.Close)
	}
	return err
}

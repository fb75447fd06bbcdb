package journal_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/store"
)

// BenchmarkSyncPublish prices cluster.sync: acknowledged publishes over
// 5,000 channels with 1 or 128 outstanding, on one durable node (the
// edge's sole-writer feed) and on a three-node cluster at three
// replicas, with JetStream fsyncing every write before its
// acknowledgment (always), every second, or every 2 minutes (NATS's
// default). ns/op is
// the inverse of the acknowledged rate; p50-µs and p99-µs are the
// latency from Publish to its acknowledgment, applied.
func BenchmarkSyncPublish(b *testing.B) {
	for _, nodes := range []int{1, 3} {
		for _, inflight := range []int{1, 128} {
			for _, sync := range []string{"always", "1s", "2m"} {
				name := "nodes=" + strconv.Itoa(nodes) + "/inflight=" + strconv.Itoa(inflight) + "/sync=" + sync
				b.Run(name, func(b *testing.B) {
					no := journal.NodeOptions{SyncAlways: sync == "always"}
					if !no.SyncAlways {
						no.SyncInterval, _ = time.ParseDuration(sync)
					}
					benchSyncPublish(b, syncJournal(b, nodes, no), inflight)
				})
			}
		}
	}
}

// syncJournal opens a journal, started on a fresh store, on one node
// (the sole writer, as a single durable edge) or on the first of a
// three-node cluster at three replicas.
func syncJournal(b *testing.B, nodes int, no journal.NodeOptions) *journal.Journal {
	var j *journal.Journal
	if nodes == 1 {
		no.DataDir, no.Logger = b.TempDir(), journaltest.Logger()
		n, err := journal.StartNode(&no)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(n.Close)
		j = journaltest.Open(b, n, &journal.Options{SoleWriter: true})
	} else {
		j = journaltest.Open(b, journaltest.ClusterWith(b, nodes, no)[0], &journal.Options{Replicas: nodes})
	}
	return feedStore(b, j)
}

// feedStore starts j feeding a fresh store and waits until it caught up.
func feedStore(b *testing.B, j *journal.Journal) *journal.Journal {
	st := store.New(&store.Options{Epoch: j.Epoch()})
	b.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Start(ctx, st); err != nil {
		b.Fatal(err)
	}
	<-j.CaughtUp()
	return j
}

func benchSyncPublish(b *testing.B, j *journal.Journal, inflight int) {
	keys := make([]string, 5000)
	for i := range keys {
		keys[i] = "bench\x00ch" + strconv.Itoa(i)
	}
	payload := make([]byte, 160)
	sem := make(chan struct{}, inflight)
	var wg sync.WaitGroup
	lat := &hist{h: hdrhistogram.New(1, 10_000_000, 3)}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		sem <- struct{}{}
		wg.Add(1)
		t0 := time.Now()
		j.Publish(keys[i%len(keys)], payload, func(_ uint64, err error) {
			if err != nil {
				b.Error(err)
			}
			lat.Observe(time.Since(t0).Seconds())
			<-sem
			wg.Done()
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acks/s")
	b.ReportMetric(float64(lat.h.ValueAtQuantile(50)), "p50-µs")
	b.ReportMetric(float64(lat.h.ValueAtQuantile(99)), "p99-µs")
}

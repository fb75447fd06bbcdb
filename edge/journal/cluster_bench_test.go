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

type hist struct {
	mu sync.Mutex
	h  *hdrhistogram.Histogram
}

func (h *hist) Observe(s float64) {
	h.mu.Lock()
	_ = h.h.RecordValue(int64(s * 1e6))
	h.mu.Unlock()
}

// BenchmarkClusterPublish publishes on node 1 of a two-node cluster with
// the stream at two replicas, 128 publishes outstanding, and reports the
// JetStream acknowledgment's latency and the applied one's (µs).
func BenchmarkClusterPublish(b *testing.B) {
	nodes := journaltest.Cluster(b, 2)
	j := journaltest.Open(b, nodes[0], &journal.Options{Replicas: 2})
	st := store.New(&store.Options{Epoch: j.Epoch()})
	b.Cleanup(func() { st.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Start(ctx, st); err != nil {
		b.Fatal(err)
	}
	<-j.CaughtUp()
	keys := make([]string, 5000)
	for i := range keys {
		keys[i] = "bench\x00ch" + strconv.Itoa(i)
	}
	payload := make([]byte, 160)
	sem := make(chan struct{}, 128)
	var wg sync.WaitGroup
	total := &hist{h: hdrhistogram.New(1, 10_000_000, 3)}
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
			total.Observe(time.Since(t0).Seconds())
			<-sem
			wg.Done()
		})
	}
	wg.Wait()
	b.ReportMetric(float64(total.h.ValueAtQuantile(50)), "p50-µs")
	b.ReportMetric(float64(total.h.ValueAtQuantile(99)), "p99-µs")
}

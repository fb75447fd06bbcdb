package journal_test

import (
	"sync"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
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
// acknowledgments a second and their latency (µs).
func BenchmarkClusterPublish(b *testing.B) {
	nodes := journaltest.Cluster(b, 2)
	j := feedStore(b, journaltest.Open(b, nodes[0], &journal.Options{Replicas: 2}))
	benchSyncPublish(b, j, 128)
}

package journal

import (
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkPublishPipelined publishes with inflight publishes
// outstanding over many channels, as the channels load scenario does:
// ns/op is the cost and the latency-bound rate of one acknowledged,
// applied publish on one durable node, with the feed reading every
// message back from the stream (consumer) or appending its own
// acknowledged publishes (sole, Options.SoleWriter).
func BenchmarkPublishPipelined(b *testing.B) {
	for _, bc := range []struct {
		inflight int
		sole     bool
	}{{1, false}, {128, false}, {1, true}, {2, true}, {8, true}, {128, true}} {
		feed := "consumer"
		if bc.sole {
			feed = "sole"
		}
		inflight := bc.inflight
		b.Run("inflight="+strconv.Itoa(inflight)+"/feed="+feed, func(b *testing.B) {
			j, _ := open(b, node(b, ""), &Options{SoleWriter: bc.sole})
			keys := make([]string, 5000)
			for i := range keys {
				keys[i] = "bench\x00ch" + strconv.Itoa(i)
			}
			payload := make([]byte, 160)
			sem := make(chan struct{}, inflight)
			var wg sync.WaitGroup
			var failed sync.Once
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				sem <- struct{}{}
				wg.Add(1)
				j.Publish(keys[i%len(keys)], payload, func(_ uint64, err error) {
					if err != nil {
						failed.Do(func() { b.Error(err) })
					}
					<-sem
					wg.Done()
				})
			}
			wg.Wait()
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's CPU time so far (user and system), which a
// benchmark divides by its operations: on a shared machine it varies far
// less than the wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

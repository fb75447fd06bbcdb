package loadgen

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: microseconds, from 1µs to 10 minutes, 3 significant
// digits (0.1% resolution).
const (
	histMin     = 1
	histMax     = int64(10 * time.Minute / time.Microsecond)
	histSigFigs = 3
)

// latencyShards is how many shards a run's latency collectors have:
// recorders pick one by their index, so that the delivery goroutines of
// different cores rarely take the same lock.
const latencyShards = 16

// newHistogram returns an empty histogram of microseconds.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMin, histMax, histSigFigs)
}

// Latency collects durations from many goroutines into HDR histograms.
// Recorders pick a shard (by subscriber index), so thousands of delivery
// goroutines share a few locks; one collector goroutine calls Tick to
// gather the interval's values and fold them into the total.
type Latency struct {
	shards []latencyShard
	// cmu guards interval and total, which Tick, Reset and Total use
	// from the reporting goroutine and the run's.
	cmu      sync.Mutex
	interval *hdrhistogram.Histogram
	total    *hdrhistogram.Histogram
}

type latencyShard struct {
	mu sync.Mutex // guards h; taken by recorders and by Tick
	h  *hdrhistogram.Histogram
	_  [48]byte // keeps neighbouring shards' locks off one cache line
}

// NewLatency returns a collector with n shards (at least 1).
func NewLatency(n int) *Latency {
	l := &Latency{shards: make([]latencyShard, max(n, 1)), interval: newHistogram(), total: newHistogram()}
	for i := range l.shards {
		l.shards[i].h = newHistogram()
	}
	return l
}

// Record adds one duration, through the shard chosen by key. Negative
// durations count as zero; durations past ten minutes as ten minutes.
func (l *Latency) Record(key int, d time.Duration) {
	v := int64(d / time.Microsecond)
	sh := &l.shards[uint(key)%uint(len(l.shards))]
	sh.mu.Lock()
	switch {
	case v < histMin:
		v = histMin
	case v > histMax:
		v = histMax
	}
	_ = sh.h.RecordValue(v) // v is within the bounds: never fails
	sh.mu.Unlock()
}

// Tick moves what was recorded since the last Tick into the total and
// summarizes it.
func (l *Latency) Tick() LatencyStats {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	l.tickLocked()
	return Summarize(l.interval)
}

// tickLocked gathers the shards into interval and total; cmu is held.
func (l *Latency) tickLocked() {
	l.interval.Reset()
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		l.interval.Merge(sh.h)
		sh.h.Reset()
		sh.mu.Unlock()
	}
	l.total.Merge(l.interval)
}

// Reset forgets everything recorded so far: the measured window starts.
func (l *Latency) Reset() {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	l.tickLocked()
	l.total.Reset()
}

// Total summarizes everything recorded since the last Reset.
func (l *Latency) Total() LatencyStats {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	l.tickLocked()
	return Summarize(l.total)
}

// totalInto summarizes everything recorded since the last Reset, as
// Total does, and merges it into h.
func (l *Latency) totalInto(h *hdrhistogram.Histogram) LatencyStats {
	l.cmu.Lock()
	defer l.cmu.Unlock()
	l.tickLocked()
	h.Merge(l.total)
	return Summarize(l.total)
}

// LatencyStats summarizes a histogram of microseconds, in milliseconds.
type LatencyStats struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

// Summarize returns the statistics of a histogram of microseconds.
func Summarize(h *hdrhistogram.Histogram) LatencyStats {
	if h.TotalCount() == 0 {
		return LatencyStats{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return LatencyStats{
		Count: h.TotalCount(),
		Mean:  h.Mean() / 1000,
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}

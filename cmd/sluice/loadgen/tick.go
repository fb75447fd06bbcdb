package loadgen

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Phase is the stage a run is in.
type Phase int32

// The phases, in order.
const (
	PhaseConnect Phase = iota // ramping up the subscribers
	PhaseWarmup               // publishing, not measured yet
	PhaseMeasure              // the measured window
	PhaseHold                 // idle: connections held (the measured window)
	PhaseDrain                // publishers stopped, messages in flight arriving
	PhaseClose                // closing the connections
)

var phaseNames = [...]string{"connect", "warmup", "measure", "hold", "drain", "close"}

// String returns the phase's name.
func (p Phase) String() string {
	if p < 0 || int(p) >= len(phaseNames) {
		return fmt.Sprintf("Phase(%d)", int(p))
	}
	return phaseNames[p]
}

// Tick is the live view of a run, once per Options.Interval.
type Tick struct {
	Elapsed     time.Duration
	Phase       Phase
	Connections int64   // open now
	PublishRate float64 // messages per second over the interval
	DeliverRate float64 // deliveries per second over the interval
	Latency     LatencyStats
	Missing     int64 // gaps open now
	Duplicates  int64
	Reordered   int64
	Errors      uint64
	// ServerCPU is the server's CPU use over the interval, in cores; -1
	// when unknown. ServerRSS is its resident memory, 0 when unknown.
	ServerCPU float64
	ServerRSS int64
}

// String formats the tick as one line.
func (t Tick) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%5.1fs %-7s conns %-6d pub %8s/s  recv %9s/s  p50 %7s  p99 %7s",
		t.Elapsed.Seconds(), t.Phase, t.Connections, Count(t.PublishRate), Count(t.DeliverRate),
		Millis(t.Latency.P50), Millis(t.Latency.P99))
	fmt.Fprintf(&b, "  missing %d dup %d reord %d err %d", t.Missing, t.Duplicates, t.Reordered, t.Errors)
	if t.ServerCPU >= 0 {
		fmt.Fprintf(&b, "  server cpu %3.0f%% rss %s", 100*t.ServerCPU, Bytes(float64(t.ServerRSS)))
	}
	return b.String()
}

// ticker is the reporting goroutine's state.
type ticker struct {
	at        time.Time
	published uint64
	delivered int64
	server    *Sample
}

// startTicker starts the reporting goroutine; the returned function stops
// it and waits for it, and may be called more than once.
func (r *run) startTicker() func() {
	if r.opts.OnTick == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(r.opts.Interval)
		defer t.Stop()
		st := ticker{at: time.Now(), server: r.sample(ctx, r.opts.Server)}
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				r.opts.OnTick(r.tick(ctx, &st))
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// tick computes one Tick against the previous one.
func (r *run) tick(ctx context.Context, st *ticker) Tick {
	now := time.Now()
	var published uint64
	for _, l := range r.lanes {
		published += l.published.Load()
	}
	seen := r.tallies()
	delivered := seen.delivered
	secs := now.Sub(st.at).Seconds()
	t := Tick{
		Elapsed:     now.Sub(r.epoch),
		Phase:       Phase(r.phase.Load()),
		Connections: r.open.Load(),
		PublishRate: float64(published-st.published) / secs,
		DeliverRate: float64(delivered-st.delivered) / secs,
		Latency:     r.lat.Tick(),
		Missing:     seen.missing,
		Duplicates:  seen.dups,
		Reordered:   seen.reordered,
		Errors:      r.problems.total.Load(),
		ServerCPU:   -1,
	}
	srv := r.sample(ctx, r.opts.Server)
	if srv != nil && st.server != nil {
		t.ServerCPU = (srv.CPU - st.server.CPU).Seconds() / secs
		t.ServerRSS = srv.RSS
	}
	*st = ticker{at: now, published: published, delivered: delivered, server: srv}
	return t
}

// Count formats a count with a k or M suffix.
func Count(v float64) string {
	switch {
	case v >= 10e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 10e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// Millis formats milliseconds, switching to µs or s where clearer.
func Millis(ms float64) string {
	switch {
	case ms == 0:
		return "-"
	case ms < 1:
		return fmt.Sprintf("%.0fµs", ms*1000)
	case ms >= 10000:
		return fmt.Sprintf("%.1fs", ms/1000)
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.2fms", ms)
}

// Bytes formats a byte count in binary units.
func Bytes(b float64) string {
	switch {
	case b >= 1<<30 || b <= -(1<<30):
		return fmt.Sprintf("%.2fGiB", b/(1<<30))
	case b >= 1<<20 || b <= -(1<<20):
		return fmt.Sprintf("%.1fMiB", b/(1<<20))
	case b >= 1<<10 || b <= -(1<<10):
		return fmt.Sprintf("%.1fKiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0fB", b)
}

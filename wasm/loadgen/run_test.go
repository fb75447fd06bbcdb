package loadgen

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// quick is a small, short configuration.
func quick(sc Scenario) Config {
	return Config{
		Scenario: sc, Subscribers: 4, Duration: 300 * time.Millisecond,
		Warmup: -1, Drain: 300 * time.Millisecond, Stall: 100 * time.Millisecond,
	}
}

func TestRunCountsWhatTheSubscribersSee(t *testing.T) {
	tests := []struct {
		name                  string
		fault                 func(sub int, st Stamp) action
		lost, dups, reordered uint64
	}{
		{"clean", nil, 0, 0, 0},
		{"one lost", func(sub int, st Stamp) action {
			return pick(sub == 0 && st.Seq == 3, dropIt)
		}, 1, 0, 0},
		{"duplicated to two subscribers", func(sub int, st Stamp) action {
			return pick(sub < 2 && st.Seq == 5, dupIt)
		}, 0, 2, 0},
		{"reordered", func(sub int, st Stamp) action {
			return pick(sub == 3 && st.Seq == 7, holdIt)
		}, 0, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBroker()
			b.fault = tt.fault
			cfg := quick(Fanout)
			cfg.Inflight = 1
			res, err := Run(context.Background(), b, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Published < 8 {
				t.Fatalf("published only %d messages", res.Published)
			}
			if res.Lost != tt.lost || res.Duplicates != tt.dups || res.Reordered != tt.reordered {
				t.Errorf("lost %d dups %d reordered %d; want %d %d %d",
					res.Lost, res.Duplicates, res.Reordered, tt.lost, tt.dups, tt.reordered)
			}
			if res.Delivered == 0 || res.Latency.Count == 0 || res.Connect.Connected != 4 {
				t.Errorf("delivered %d, latency count %d, connected %d", res.Delivered, res.Latency.Count, res.Connect.Connected)
			}
			if res.Expected != 4*storedTotal(res) && tt.lost == 0 {
				t.Errorf("expected %d deliveries, want 4 per stored message", res.Expected)
			}
		})
	}
}

// storedTotal is the messages stored over the whole run, from Expected
// of a clean fanout run (every subscriber owed every message).
func storedTotal(res *Result) uint64 { return res.Expected / uint64(res.Config.Subscribers) }

func pick(cond bool, a action) action {
	if cond {
		return a
	}
	return deliverIt
}

func TestRunScenarios(t *testing.T) {
	tests := []struct {
		name  string
		cfg   func() Config
		check func(t *testing.T, res *Result)
	}{
		{"channels spread the lanes", func() Config {
			c := quick(Channels)
			c.Channels, c.Subscribers, c.Publishers, c.Inflight = 6, 12, 2, 2
			return c
		}, func(t *testing.T, res *Result) {
			if res.Lost != 0 || res.Delivered == 0 || res.Expected == 0 {
				t.Errorf("lost %d, delivered %d, expected %d", res.Lost, res.Delivered, res.Expected)
			}
		}},
		{"idle holds", func() Config { return quick(Idle) }, func(t *testing.T, res *Result) {
			if res.Connect.Connected != 4 || res.Published != 0 || res.Window < 0.3 {
				t.Errorf("connected %d, published %d, window %.2fs", res.Connect.Connected, res.Published, res.Window)
			}
		}},
		{"publish measures acknowledgments", func() Config {
			c := quick(Publish)
			c.Inflight, c.Subscribers = 3, -1
			return c
		}, func(t *testing.T, res *Result) {
			if res.Published == 0 || res.PublishLatency.Count == 0 || res.Delivered != 0 {
				t.Errorf("published %d, ack latency count %d, delivered %d", res.Published, res.PublishLatency.Count, res.Delivered)
			}
		}},
		{"fixed rate", func() Config {
			c := quick(Fanout)
			c.Rate, c.Duration = 100, 500*time.Millisecond
			return c
		}, func(t *testing.T, res *Result) {
			if res.PublishRate < 50 || res.PublishRate > 150 {
				t.Errorf("publish rate %.0f/s, want about 100/s", res.PublishRate)
			}
		}},
		{"no ack", func() Config {
			c := quick(Fanout)
			c.NoAck = true
			return c
		}, func(t *testing.T, res *Result) {
			if res.Delivered == 0 || res.PublishLatency.Count != 0 || res.Lost != 0 {
				t.Errorf("delivered %d, ack latencies %d, lost %d", res.Delivered, res.PublishLatency.Count, res.Lost)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), newBroker(), tt.cfg(), nil)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res)
		})
	}
}

func TestRefusedPublishesAreNotLost(t *testing.T) {
	b := newBroker()
	b.refuse = func(st Stamp) bool { return st.Seq%3 == 0 }
	cfg := quick(Fanout)
	cfg.Inflight = 1
	res, err := Run(context.Background(), b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["publish refused"].Count == 0 || res.Lost != 0 {
		t.Errorf("refused %d, lost %d; want some refused and none lost", res.Errors["publish refused"].Count, res.Lost)
	}
}

func TestRunReportsTicksAndTheWindow(t *testing.T) {
	var mu sync.Mutex
	var ticks []Tick
	measured := make(chan time.Duration, 1)
	opts := &Options{
		Interval: 50 * time.Millisecond,
		OnTick:   func(t Tick) { mu.Lock(); ticks = append(ticks, t); mu.Unlock() },
		OnMeasure: func(ctx context.Context, window time.Duration) {
			<-ctx.Done()
			measured <- window
		},
	}
	res, err := Run(context.Background(), newBroker(), quick(Fanout), opts)
	if err != nil {
		t.Fatal(err)
	}
	if w := <-measured; w != 300*time.Millisecond {
		t.Errorf("OnMeasure got window %v", w)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ticks) < 3 {
		t.Fatalf("%d ticks in a 300ms window at 50ms", len(ticks))
	}
	var sawTraffic bool
	for _, tk := range ticks {
		sawTraffic = sawTraffic || (tk.Phase == PhaseMeasure && tk.DeliverRate > 0)
		if !strings.Contains(tk.String(), "recv") {
			t.Errorf("tick line %q", tk.String())
		}
	}
	if !sawTraffic {
		t.Error("no tick showed deliveries during the window")
	}
	var out bytes.Buffer
	if err := res.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"fake: fanout", "delivered", "lost 0, duplicated 0, reordered 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := quick(Fanout)
	cfg.Duration = time.Hour
	opts := &Options{Interval: 10 * time.Millisecond, OnTick: func(tk Tick) {
		if tk.Phase == PhaseMeasure {
			cancel()
		}
	}}
	start := time.Now()
	res, err := Run(ctx, newBroker(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted || time.Since(start) > 10*time.Second {
		t.Errorf("interrupted %v after %v", res.Interrupted, time.Since(start))
	}
	if res.Lost != 0 {
		t.Errorf("an early stop lost %d messages", res.Lost)
	}
}

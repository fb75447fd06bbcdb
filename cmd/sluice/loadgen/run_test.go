package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
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
	lanes := []struct {
		name     string
		inflight int
	}{{"one lane", 1}, {"four lanes", 4}}
	for _, tt := range tests {
		for _, ln := range lanes {
			forEachPublishMode(t, tt.name+"/"+ln.name, func(t *testing.T, b *broker) {
				if tt.fault != nil {
					// Only the last lane's messages meet the fault.
					last := uint16(ln.inflight - 1)
					b.fault = func(sub int, st Stamp) action {
						return pick(st.Publisher == last, tt.fault(sub, st))
					}
				}
				cfg := quick(Fanout)
				cfg.Inflight = ln.inflight
				checkCounts(t, b, cfg, tt.lost, tt.dups, tt.reordered)
			})
		}
	}
}

// TestSlowDeliveriesAreNotWrittenOff: when the goroutines that deliver
// do not run for longer than the stall timeout (a loaded machine), the
// publishers wait for them: nothing is lost, no stall is counted.
func TestSlowDeliveriesAreNotWrittenOff(t *testing.T) {
	forEachPublishMode(t, "four lanes", func(t *testing.T, b *broker) {
		cfg := quick(Fanout)
		cfg.Inflight = 4
		// Every subscriber stops before lane 0's 20th message for three
		// stall timeouts, while the other lanes' gates are closed.
		b.pause = func(st Stamp) time.Duration {
			return pickDuration(st.Publisher == 0 && st.Seq == 20, 3*cfg.Stall)
		}
		checkCounts(t, b, cfg, 0, 0, 0)
	})
}

func pickDuration(cond bool, d time.Duration) time.Duration {
	if cond {
		return d
	}
	return 0
}

// forEachPublishMode runs a test against a broker whose connections
// publish synchronously, then against one whose connections are
// AsyncPublishers (the lanes then chain publishes from acknowledgments).
func forEachPublishMode(t *testing.T, name string, f func(t *testing.T, b *broker)) {
	for _, async := range []bool{false, true} {
		mode := "sync"
		if async {
			mode = "async"
		}
		t.Run(name+"/"+mode, func(t *testing.T) {
			b := newBroker()
			b.async = async
			f(t, b)
		})
	}
}

// checkCounts runs cfg (4 subscribers) against b and checks what the
// subscribers counted.
func checkCounts(t *testing.T, b *broker, cfg Config, lost, dups, reordered uint64) {
	t.Helper()
	res, err := Run(context.Background(), b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Published < 8*uint64(cfg.Inflight) {
		t.Fatalf("published only %d messages on %d lanes", res.Published, cfg.Inflight)
	}
	if res.Lost != lost || res.Duplicates != dups || res.Reordered != reordered {
		t.Errorf("lost %d dups %d reordered %d; want %d %d %d",
			res.Lost, res.Duplicates, res.Reordered, lost, dups, reordered)
	}
	if res.Delivered == 0 || res.Latency.Count == 0 || res.Connect.Connected != 4 {
		t.Errorf("delivered %d, latency count %d, connected %d", res.Delivered, res.Latency.Count, res.Connect.Connected)
	}
	if res.Expected != 4*storedTotal(res) && lost == 0 {
		t.Errorf("expected %d deliveries, want 4 per stored message", res.Expected)
	}
	if res.ErrorTotal != 0 {
		t.Errorf("errors %v", res.Errors)
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
			// The pacer never runs ahead of the rate; a starved machine
			// (make test runs packages in parallel on 2 cores) can hold it
			// back, and it catches up, so only a stall of most of the
			// window takes it far below.
			if res.PublishRate < 20 || res.PublishRate > 150 {
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
		forEachPublishMode(t, tt.name, func(t *testing.T, b *broker) {
			res, err := Run(context.Background(), b, tt.cfg(), nil)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, res)
		})
	}
}

func TestRefusedPublishesAreNotLost(t *testing.T) {
	forEachPublishMode(t, "fanout", func(t *testing.T, b *broker) {
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
	})
}

// TestUnacknowledgedPublishesEndTheRun: a lane whose publish is never
// acknowledged gives it up when the drain ends, counting it as stored (it
// was), so the run ends and loses nothing.
func TestUnacknowledgedPublishesEndTheRun(t *testing.T) {
	b := newBroker()
	b.async = true
	b.silent = func(st Stamp) bool { return st.Seq == 5 }
	cfg := quick(Fanout)
	cfg.Inflight = 2
	res, err := Run(context.Background(), b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors["publish"].Count != 2 || res.Lost != 0 {
		t.Errorf("publish problems %d, lost %d; want 2 (one per lane) and none lost", res.Errors["publish"].Count, res.Lost)
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
	// What each figure counts is said: the window's, then the whole
	// run's messages stored and the deliveries they owe, one to each of
	// the channel's 4 subscribers, which add up.
	if res.Stored == 0 || res.Expected != 4*res.Stored || res.Published > res.Stored {
		t.Errorf("stored %d, owed %d, published in the window %d: want 4 owed per stored message, and the window within the run",
			res.Stored, res.Expected, res.Published)
	}
	for _, want := range []string{"fake: fanout", "published, delivered and latency count the window alone",
		fmt.Sprintf("%d messages in the window", res.Published), fmt.Sprintf("%d deliveries in the window", res.Delivered),
		fmt.Sprintf("whole run (warm-up, window, drain): %d messages stored, so %d deliveries owed", res.Stored, res.Expected),
		"lost 0, duplicated 0, reordered 0"} {
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

func TestMessagesOfOtherChannelsAreForeign(t *testing.T) {
	cfg, err := Config{Scenario: Channels, Channels: 2, Subscribers: 2, Inflight: 1}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	r := newRun(newBroker(), cfg, nil)
	for _, l := range r.lanes {
		l.setFanout(cfg.Window, []int{1, 1})
	}
	sub := r.subs[0] // on channel 0, which lane 0 alone publishes to
	tests := []struct {
		name      string
		payload   string
		delivered int64
		foreign   uint64
	}{
		{"its channel's lane", string(AppendPayload(nil, Stamp{Publisher: 0, Seq: 1}, 64)), 1, 0},
		{"another channel's lane", string(AppendPayload(nil, Stamp{Publisher: 1, Seq: 1}, 64)), 1, 1},
		{"no such lane", string(AppendPayload(nil, Stamp{Publisher: 9, Seq: 1}, 64)), 1, 2},
		{"no stamp", "hello", 1, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub.deliver(tt.payload)
			if got := r.tallies().delivered; got != tt.delivered {
				t.Errorf("delivered %d, want %d", got, tt.delivered)
			}
			if got := r.problems.snapshot()["foreign message"].Count; got != tt.foreign {
				t.Errorf("foreign messages %d, want %d", got, tt.foreign)
			}
		})
	}
}

func TestRunAnnouncesItsPhases(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []Phase
	}{
		{"traffic", quick(Fanout), []Phase{PhaseConnect, PhaseWarmup, PhaseMeasure, PhaseDrain, PhaseClose}},
		{"idle", quick(Idle), []Phase{PhaseConnect, PhaseHold, PhaseClose}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Phase // OnPhase runs on the run's goroutine: no lock
			opts := &Options{OnPhase: func(p Phase) { got = append(got, p) }}
			if _, err := Run(context.Background(), newBroker(), tt.cfg, opts); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("phases %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRunRaisesTheGCTargetWhileItLasts(t *testing.T) {
	// The process's own target is set for the test (whatever GOGC the
	// test binary was started with) and put back after it; so is the
	// GOGC variable, which a default run defers to.
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	t.Setenv("GOGC", "")
	os.Unsetenv("GOGC")
	tests := []struct {
		name    string
		before  int
		percent int
		gogc    bool // GOGC set, as by the user
		want    int
	}{
		{"default", 100, 0, false, DefaultGCPercent},
		{"chosen", 100, 250, false, 250},
		{"left alone", 100, -1, false, 100},
		{"never lowered", 800, 0, false, 800},
		{"the user's GOGC", 100, 0, true, 100},
		{"chosen over the user's GOGC", 100, 250, true, 250},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.gogc {
				t.Setenv("GOGC", "100")
			}
			debug.SetGCPercent(tt.before)
			before := gcPercent()
			if before != tt.before {
				t.Fatalf("GOGC set to %d reads back as %d", tt.before, before)
			}
			var during int
			opts := &Options{GCPercent: tt.percent, OnPhase: func(p Phase) {
				if p == PhaseMeasure {
					during = gcPercent()
				}
			}}
			if _, err := Run(context.Background(), newBroker(), quick(Fanout), opts); err != nil {
				t.Fatal(err)
			}
			if during != tt.want {
				t.Errorf("GOGC during the run = %d, want %d", during, tt.want)
			}
			if after := gcPercent(); after != before {
				t.Errorf("GOGC after the run = %d, want %d again", after, before)
			}
		})
	}
}

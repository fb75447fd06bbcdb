package loadgen

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// killableBroker is the fake broker whose connections can be "killed":
// each kill is counted, and the connection goes on (the fake has no
// network to drop; the real one is tested against an edge in
// cmd/sluice).
type killableBroker struct {
	*broker
	kills atomic.Int64
}

func (k *killableBroker) Dial(ctx context.Context, problem func(error)) (Conn, error) {
	c, err := k.broker.Dial(ctx, problem)
	return &killableConn{Conn: c, kills: &k.kills}, err
}

type killableConn struct {
	Conn
	kills *atomic.Int64
}

func (c *killableConn) Kill() bool {
	c.kills.Add(1)
	return true
}

// quickSoak is a soak small and short enough for a unit test.
func quickSoak() Config {
	return Config{Scenario: Soak, Subscribers: 8, Channels: 4, Rate: 400, Churn: 50,
		Duration: 400 * time.Millisecond, Warmup: -1, Drain: 300 * time.Millisecond, Stall: 100 * time.Millisecond}
}

func TestSoakDefaults(t *testing.T) {
	cfg, err := Config{Scenario: Soak}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Subscribers != 2000 || cfg.Channels != 200 || cfg.Publishers != 2 || cfg.Rate != 1000 ||
		cfg.Churn != 4 || cfg.SampleInterval != 2*time.Second || cfg.Duration != 5*time.Minute || cfg.Drain != 10*time.Second {
		t.Errorf("soak defaults %+v", cfg)
	}
	if cfg, _ := (Config{Scenario: Soak, Channels: 20}).WithDefaults(); cfg.Subscribers != 200 {
		t.Errorf("soak on 20 channels: %d subscribers, want 10 per channel", cfg.Subscribers)
	}
	if cfg, _ := (Config{Scenario: Soak, Churn: -1, SampleInterval: -1}).WithDefaults(); cfg.Churn != 0 || cfg.SampleInterval != 0 {
		t.Errorf("negative churn and sampling: %v, %v; want none", cfg.Churn, cfg.SampleInterval)
	}
	for _, bad := range []Config{
		{Scenario: Idle, Churn: 1},
		{Scenario: Soak, Subscribers: -1},
	} {
		if _, err := bad.WithDefaults(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: err %v, want ErrConfig", bad, err)
		}
	}
}

// TestSoakKillsAndCounts: the soak kills at about its churn rate while
// it publishes at its fixed rate, and a clean run passes Check.
func TestSoakKillsAndCounts(t *testing.T) {
	k := &killableBroker{broker: newBroker()}
	start := time.Now()
	res, err := Run(context.Background(), k, quickSoak(), nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if res.Killed == 0 || res.Killed != uint64(k.kills.Load()) {
		t.Errorf("result says %d killed, the driver saw %d", res.Killed, k.kills.Load())
	}
	// 50 kills/s over the 0.4 s window: about 20, never more than the
	// whole run allows (the kills stop with the publishers).
	if most := uint64(50*took.Seconds()) + 1; res.Killed > most {
		t.Errorf("%d killed at 50/s in a run of %v", res.Killed, took)
	}
	if res.Published == 0 || res.Lost+res.Duplicates+res.Reordered != 0 || res.ErrorTotal != 0 {
		t.Errorf("published %d, lost %d dup %d reordered %d, errors %v", res.Published, res.Lost, res.Duplicates, res.Reordered, res.Errors)
	}
	if err := res.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestSoakCheckCatchesFaults: what a subscriber misses, gets twice or
// out of order fails the soak's Check, and so does a publish the server
// refused; a lost connection alone (what a kill causes) does not.
func TestSoakCheckCatchesFaults(t *testing.T) {
	tests := []struct {
		name   string
		fault  action // done to lane 0's third message for one subscriber
		refuse func(st Stamp) bool
		want   string // in Check's error; "" for none
	}{
		{name: "clean"},
		{name: "lost", fault: dropIt, want: "lost 1,"},
		{name: "duplicated", fault: dupIt, want: "duplicated 1,"},
		{name: "reordered", fault: holdIt, want: "reordered 1 "},
		{name: "refused", refuse: func(st Stamp) bool { return st.Seq == 2 }, want: "publish refused errors"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBroker()
			if tt.fault != deliverIt {
				var done atomic.Bool // to the first subscriber that gets it
				b.fault = func(_ int, st Stamp) action {
					return pick(st.Publisher == 0 && st.Seq == 3 && done.CompareAndSwap(false, true), tt.fault)
				}
			}
			b.refuse = tt.refuse
			cfg := quickSoak()
			cfg.Churn = -1 // the fake broker cannot be killed
			res, err := Run(context.Background(), b, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = res.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check: %v, want none", err)
			case tt.want != "" && (!errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check: %v, want ErrIntegrity saying %q", err, tt.want)
			}
		})
	}
	// Expected troubles of a churning run do not fail it; others fail a
	// soak, and only a soak.
	res := &Result{Config: Config{Scenario: Soak}, Errors: map[string]ErrorCount{
		ProblemDisconnected: {Count: 9}, "probe": {Count: 1}}}
	if err := res.Check(); err != nil {
		t.Errorf("disconnections and a probe failure: %v, want none", err)
	}
	res.Errors["stall"] = ErrorCount{Count: 1, First: "stalled"}
	if err := res.Check(); !errors.Is(err, ErrIntegrity) {
		t.Errorf("a stall in a soak: %v, want ErrIntegrity", err)
	}
	res.Config.Scenario = Channels
	if err := res.Check(); err != nil {
		t.Errorf("a stall in a benchmark: %v, want none (counted, reported)", err)
	}
}

// TestChurnNeedsKillers: a run that should kill connections its driver
// cannot kill refuses to start rather than run without churn.
func TestChurnNeedsKillers(t *testing.T) {
	_, err := Run(context.Background(), newBroker(), quickSoak(), nil)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "cannot be killed") {
		t.Fatalf("Run: %v, want ErrConfig about killing", err)
	}
}

func TestTrend(t *testing.T) {
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-6*max(1, math.Abs(b)) }
	// Growing 2 units a second: 7,200 an hour.
	xs := []float64{0, 1, 2, 3, 4, 5}
	tr := newTrend(xs, []float64{5, 7, 9, 11, 13, 15})
	if tr.Samples != 6 || tr.First != 5 || tr.Last != 15 || tr.Min != 5 || tr.Max != 15 ||
		!near(tr.PerHour, 7200) || !near(tr.LatePerHour, 7200) {
		t.Errorf("linear: %+v", tr)
	}
	// Filling up, then flat: growth overall, none in the second half.
	tr = newTrend(xs, []float64{10, 40, 50, 50, 50, 50})
	if tr.PerHour <= 0 || !near(tr.LatePerHour, 0) || tr.Max != 50 {
		t.Errorf("fill then flat: %+v", tr)
	}
	// Noise around a level: the slope is the least-squares one.
	tr = newTrend([]float64{0, 1, 2, 3}, []float64{1, 3, 1, 3})
	if !near(tr.PerHour, 0.4*3600) {
		t.Errorf("noisy: slope %v/h, want %v", tr.PerHour, 0.4*3600)
	}
	if newTrend(nil, nil) != nil || newTrend([]float64{1}, []float64{7}).PerHour != 0 {
		t.Error("no samples, or one: want nil, and no slope")
	}
}

// TestUnconfirmedPublishesAreNotOwed: a publish sent and never
// acknowledged (the server dropped it, say with the connection) has no
// known outcome. Missing, it is not lost: the server promised nothing.
// It is an error, which fails a soak. Before, it was counted as stored
// and lost on every subscriber of its channel: the "lost=256 with 128
// publishes unacknowledged" of the soak that hid a stuck client.
func TestUnconfirmedPublishesAreNotOwed(t *testing.T) {
	b := newBroker()
	b.async = true
	b.silent = func(st Stamp) bool { return st.Publisher == 0 && st.Seq == 5 }
	b.fault = func(_ int, st Stamp) action { return pick(st.Publisher == 0 && st.Seq == 5, dropIt) }
	cfg := quick(Fanout)
	cfg.Inflight = 2
	res, err := Run(context.Background(), b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.Unconfirmed != 1 || res.Errors["publish"].Count != 1 {
		t.Errorf("lost %d, unconfirmed %d, publish errors %v; want 0, 1, 1", res.Lost, res.Unconfirmed, res.Errors)
	}
	res.Config.Scenario = Soak
	if err := res.Check(); !errors.Is(err, ErrIntegrity) {
		t.Errorf("a soak with an unacknowledged publish: Check %v, want ErrIntegrity", err)
	}
}

// TestUnsentPublishesAreTakenBack: a publish that fails before it is
// sent (the client reconnecting) stored nothing: its sequence number is
// used again, so nothing is missing, and it is counted as an error only.
func TestUnsentPublishesAreTakenBack(t *testing.T) {
	b := newBroker()
	b.async = true
	var once atomic.Bool
	b.unsent = func(st Stamp) bool { return st.Publisher == 0 && st.Seq == 5 && once.CompareAndSwap(false, true) }
	cfg := quick(Fanout)
	cfg.Inflight = 2
	res, err := Run(context.Background(), b, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Lost != 0 || res.Unconfirmed != 0 || res.Errors["publish"].Count != 1 || res.Expected != 4*storedTotal(res) {
		t.Errorf("lost %d, unconfirmed %d, owed %d, errors %v; want nothing lost or unconfirmed, one error",
			res.Lost, res.Unconfirmed, res.Expected, res.Errors)
	}
}

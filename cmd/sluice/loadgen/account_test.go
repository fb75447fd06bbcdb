package loadgen

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStampRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		st   Stamp
		size int
	}{
		{"zero", Stamp{}, StampSize},
		{"typical", Stamp{Publisher: 3, Seq: 12345, Sent: 1500 * time.Millisecond}, 128},
		{"largest", Stamp{Publisher: 65535, Seq: maxSeq, Sent: time.Duration(1<<63 - 1)}, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := AppendPayload(nil, tt.st, tt.size)
			if len(p) != tt.size {
				t.Fatalf("payload is %d bytes, want %d", len(p), tt.size)
			}
			got, err := ParseStamp(string(p))
			if err != nil || got != tt.st {
				t.Fatalf("ParseStamp = %+v, %v; want %+v", got, err, tt.st)
			}
			for i := StampSize; i < len(p); i++ {
				if p[i] != padding[i%len(padding)] {
					t.Fatalf("byte %d is %q, want %q", i, p[i], padding[i%len(padding)])
				}
			}
		})
	}
}

func TestParseStampRejectsForeignMessages(t *testing.T) {
	for _, p := range []string{"", "hello", strings.Repeat("g", StampSize), strings.Repeat("A", 40)} {
		if _, err := ParseStamp(p); !errors.Is(err, errStamp) {
			t.Errorf("ParseStamp(%q) error = %v, want errStamp", p, err)
		}
	}
}

func TestStreamAccounting(t *testing.T) {
	tests := []struct {
		name      string
		seqs      []uint64
		published uint64
		want      []Arrival
		received  uint64
		lost      uint64
		dups      uint64
		reordered uint64
	}{
		{"in order", []uint64{1, 2, 3}, 3, []Arrival{InOrder, InOrder, InOrder}, 3, 0, 0, 0},
		{"tail lost", []uint64{1, 2}, 4, []Arrival{InOrder, InOrder}, 2, 2, 0, 0},
		{"gap", []uint64{1, 4, 5}, 5, []Arrival{InOrder, Ahead, InOrder}, 3, 2, 0, 0},
		{"reordered", []uint64{1, 3, 2, 4}, 4, []Arrival{InOrder, Ahead, Late, InOrder}, 4, 0, 0, 1},
		{"duplicate", []uint64{1, 2, 2, 3}, 3, []Arrival{InOrder, InOrder, Duplicate, InOrder}, 3, 0, 1, 0},
		{"late then duplicate", []uint64{2, 1, 1}, 2, []Arrival{Ahead, Late, Duplicate}, 2, 0, 1, 1},
		{"nothing", nil, 3, nil, 0, 3, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Stream
			for i, seq := range tt.seqs {
				if got := s.Observe(seq); got != tt.want[i] {
					t.Errorf("Observe(%d) = %d, want %d", seq, got, tt.want[i])
				}
			}
			if s.Received() != tt.received || s.Lost(tt.published) != tt.lost ||
				s.Duplicates() != tt.dups || s.Reordered() != tt.reordered {
				t.Errorf("received %d lost %d dups %d reordered %d; want %d %d %d %d",
					s.Received(), s.Lost(tt.published), s.Duplicates(), s.Reordered(),
					tt.received, tt.lost, tt.dups, tt.reordered)
			}
		})
	}
}

func TestStreamBoundsItsGaps(t *testing.T) {
	var s Stream
	s.Observe(1)
	s.Observe(1_000_000) // a gap far larger than maxMissing
	if got := s.Missing(); got != 999_998 {
		t.Errorf("Missing = %d, want 999998", got)
	}
	if len(s.missing) > maxMissing {
		t.Errorf("remembers %d gaps, want at most %d", len(s.missing), maxMissing)
	}
	if got := s.Observe(999_999); got != Late {
		t.Errorf("a recent gap filled: %d, want Late", got)
	}
	if got := s.Lost(1_000_000); got != 999_997 {
		t.Errorf("Lost = %d, want 999997", got)
	}
}

func TestLatencyQuantiles(t *testing.T) {
	l := NewLatency(4)
	for i := 1; i <= 1000; i++ {
		l.Record(i, time.Duration(i)*time.Millisecond)
	}
	tick := l.Tick()
	if tick.Count != 1000 {
		t.Fatalf("tick count = %d, want 1000", tick.Count)
	}
	// Three significant digits: within 0.1%.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", tick.P50, 500}, {"p99", tick.P99, 990}, {"max", tick.Max, 1000}} {
		if c.got < c.want*0.999 || c.got > c.want*1.001 {
			t.Errorf("%s = %vms, want %vms", c.name, c.got, c.want)
		}
	}
	if next := l.Tick(); next.Count != 0 {
		t.Errorf("a second tick saw %d values, want 0", next.Count)
	}
	if total := l.Total(); total.Count != 1000 {
		t.Errorf("total = %d, want 1000", total.Count)
	}
	l.Record(0, -time.Second)
	l.Reset()
	if total := l.Total(); total.Count != 0 {
		t.Errorf("total after Reset = %d, want 0", total.Count)
	}
}

func TestGateHoldsThePublisher(t *testing.T) {
	g := newGate(2, 3) // 2 messages of 3 deliveries
	ctx := context.Background()
	for range 3 {
		if err := g.wait(ctx, time.Minute); err != nil {
			t.Fatal(err)
		}
		g.published(3)
	}
	// 9 deliveries owed, limit 6: held until at most 3 are owed.
	released := make(chan error, 1)
	go func() { released <- g.wait(ctx, time.Minute) }()
	poll.Until(t, "the publisher to wait", func() bool { return g.wakeAt.Load() != 0 })
	for range 5 {
		g.delivered()
	}
	select {
	case err := <-released:
		t.Fatalf("released with 4 deliveries owed (err %v)", err)
	case <-time.After(20 * time.Millisecond):
	}
	g.delivered()
	if err := <-released; err != nil {
		t.Fatalf("wait = %v", err)
	}
}

func TestGateWritesOffLostMessages(t *testing.T) {
	g := newGate(1, 1)
	g.published(1)
	g.published(1)
	if err := g.wait(context.Background(), 10*time.Millisecond); !errors.Is(err, ErrStalled) {
		t.Fatalf("wait = %v, want ErrStalled", err)
	}
	if !g.drained() {
		t.Error("the written-off debt is still owed")
	}
	g.published(1)
	g.published(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.wait(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("wait with an ended context = %v", err)
	}
}

func TestConfigDefaults(t *testing.T) {
	tests := []struct {
		name    string
		in      Config
		check   func(Config) bool
		wantErr bool
	}{
		{"fanout", Config{Scenario: Fanout, Channels: 7},
			func(c Config) bool {
				return c.Channels == 1 && c.Publishers == 1 && c.Subscribers == 100 && c.Warmup == time.Second
			}, false},
		{"channels", Config{Scenario: Channels, Channels: 50},
			func(c Config) bool { return c.Subscribers == 100 && c.Publishers == 2 && c.Inflight == 64 }, false},
		{"idle", Config{Scenario: Idle},
			func(c Config) bool { return c.Publishers == 0 && c.Subscribers == 1000 && c.Warmup == 0 }, false},
		{"publish", Config{Scenario: Publish, Publishers: 3},
			func(c Config) bool { return c.Subscribers == 0 && c.Channels == 3 }, false},
		{"no warmup", Config{Scenario: Fanout, Warmup: -1},
			func(c Config) bool { return c.Warmup == 0 }, false},
		{"unknown", Config{Scenario: "storm"}, nil, true},
		{"idle publishing", Config{Scenario: Idle, Publishers: 1}, nil, true},
		{"tiny message", Config{Scenario: Fanout, MessageBytes: 8}, nil, true},
		{"too many lanes", Config{Scenario: Publish, Publishers: 5000, Inflight: 16}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.in.WithDefaults()
			if tt.wantErr {
				if !errors.Is(err, ErrConfig) {
					t.Fatalf("error = %v, want ErrConfig", err)
				}
				return
			}
			if err != nil || !tt.check(got) {
				t.Fatalf("WithDefaults = %+v, %v", got, err)
			}
			if !strings.HasPrefix(got.ChannelPrefix, "bench.") {
				t.Errorf("prefix %q", got.ChannelPrefix)
			}
		})
	}
}

func TestParseMetrics(t *testing.T) {
	text := "# HELP process_resident_memory_bytes x\n# TYPE process_resident_memory_bytes gauge\n" +
		"process_resident_memory_bytes 1.2345e+07\nprocess_cpu_seconds_total 3.5\n" +
		"go_gc_duration_seconds{quantile=\"0\"} 1e-05\nsluice_server_connections 12 1700000000\n"
	m, err := parseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"process_resident_memory_bytes": 12345000, "process_cpu_seconds_total": 3.5, "sluice_server_connections": 12}
	if len(m) != len(want) {
		t.Errorf("parsed %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
}

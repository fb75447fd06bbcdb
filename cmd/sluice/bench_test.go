package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/internal/poll"
)

// startBenchEdge serves the demo app on a loopback port with the given
// limits.
func startBenchEdge(t *testing.T, limits server.Limits) string {
	t.Helper()
	return servertest.Start(t, &server.Options{Apps: []*app.App{app.Demo()}, Limits: limits}, nil).URL
}

// benchJSON runs sluice bench with --json and decodes its result.
func benchJSON(t *testing.T, url string, args ...string) *loadgen.Result {
	t.Helper()
	res, code, errw := benchRun(t, url, args...)
	if code != 0 {
		t.Fatalf("bench %q exited %d: %s", args, code, errw)
	}
	return res
}

// benchRun runs `sluice bench --json` against url and returns its result,
// its exit code and what it wrote to stderr.
func benchRun(t *testing.T, url string, args ...string) (*loadgen.Result, int, string) {
	t.Helper()
	var out, errw bytes.Buffer
	args = append([]string{"bench", "--url", url, "--json", "--quiet", "--warmup", "0.1", "--drain", "2"}, args...)
	code := run(args, stdio{out: &out, errw: &errw})
	var res loadgen.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("bench %q printed no result (exit %d, stderr %q): %v\n%s", args, code, errw.String(), err, out.String())
	}
	return &res, code, errw.String()
}

func TestBenchAgainstEdge(t *testing.T) {
	url := startBenchEdge(t, server.Limits{RequestsPerSecond: 1_000_000})
	pid := strconv.Itoa(os.Getpid()) // the edge runs in this process
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, res *loadgen.Result)
	}{
		{"fanout msgpack", []string{"fanout", "--subscribers", "20", "--duration", "0.5", "--edge-pid", pid}, func(t *testing.T, res *loadgen.Result) {
			if res.Delivered == 0 || res.Latency.Count == 0 || res.Connect.Connected != 20 {
				t.Errorf("delivered %d, latencies %d, connected %d", res.Delivered, res.Latency.Count, res.Connect.Connected)
			}
			if res.Server == nil || res.Server.Source != "/proc/"+pid || res.Server.RSS == 0 {
				t.Errorf("server stats %+v, want them from /proc/%s", res.Server, pid)
			}
		}},
		{"fanout json fixed rate", []string{"fanout", "--codec", "json", "--subscribers", "5", "--rate", "50", "--duration", "0.6"}, func(t *testing.T, res *loadgen.Result) {
			// Paced, never ahead; held back only by a starved machine
			// (the loadgen's own test says why the lower bound is loose).
			if res.PublishRate < 10 || res.PublishRate > 75 {
				t.Errorf("publish rate %.1f/s, want about 50/s", res.PublishRate)
			}
			if res.Delivered < 5*10 {
				t.Errorf("delivered %d", res.Delivered)
			}
		}},
		{"channels", []string{"channels", "--channels", "10", "--per-channel", "2", "--inflight", "2", "--duration", "0.5"}, func(t *testing.T, res *loadgen.Result) {
			if res.Delivered == 0 || res.Config.Subscribers != 20 {
				t.Errorf("delivered %d to %d subscribers", res.Delivered, res.Config.Subscribers)
			}
		}},
		{"idle", []string{"idle", "--subscribers", "30", "--connect-rate", "300", "--duration", "0.3"}, func(t *testing.T, res *loadgen.Result) {
			if res.Connect.Connected != 30 || res.Connect.Rate > 400 {
				t.Errorf("connected %d at %.0f/s, want 30 at about 300/s", res.Connect.Connected, res.Connect.Rate)
			}
		}},
		{"fanout deflate offered", []string{"fanout", "--deflate", "--codec", "json", "--subscribers", "5", "--duration", "0.4"}, func(t *testing.T, res *loadgen.Result) {
			if res.Delivered == 0 {
				t.Errorf("delivered %d", res.Delivered)
			}
		}},
		{"fanout feed deltas json", []string{"fanout", "--payload", "feed", "--delta", "--codec", "json", "--subscribers", "5", "--duration", "0.4"}, func(t *testing.T, res *loadgen.Result) {
			if res.Delivered == 0 || res.Config.MessageBytes != 2048 {
				t.Errorf("delivered %d of %d bytes", res.Delivered, res.Config.MessageBytes)
			}
		}},
		{"channels feed deltas msgpack", []string{"channels", "--payload", "feed", "--delta", "--channels", "3", "--per-channel", "2", "--inflight", "4", "--duration", "0.4"}, func(t *testing.T, res *loadgen.Result) {
			if res.Delivered == 0 {
				t.Errorf("delivered %d", res.Delivered)
			}
		}},
		{"publish no ack", []string{"publish", "--no-ack", "--subscribers", "2", "--duration", "0.4"}, func(t *testing.T, res *loadgen.Result) {
			if res.Published == 0 || res.Delivered == 0 {
				t.Errorf("published %d, delivered %d", res.Published, res.Delivered)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := benchJSON(t, url, tt.args...)
			if res.Lost != 0 || res.Duplicates != 0 || res.Reordered != 0 || res.ErrorTotal != 0 {
				t.Errorf("lost %d dup %d reordered %d errors %v", res.Lost, res.Duplicates, res.Reordered, res.Errors)
			}
			tt.check(t, res)
		})
	}
}

// startMetricsEdge runs `sluice edge` (package edgecmd, in this
// process) with the demo app, its /metrics, no limit on connections per
// address and limits (YAML, "key: value, ..."), and returns its http://
// URL.
func startMetricsEdge(t *testing.T, limits string) string {
	t.Helper()
	return "http://" + edgecmdtest.Start(t, "limits: {connections_per_ip: -1, "+limits+"}\n").Addr
}

func TestBenchReadsTheEdgesMetrics(t *testing.T) {
	base := startMetricsEdge(t, "requests_per_second: 1000000")
	// The edge runs in this process, which the /proc lookup by port skips:
	// memory and CPU come from /metrics.
	res := benchJSON(t, "ws"+strings.TrimPrefix(base, "http"), "fanout", "--subscribers", "5", "--duration", "0.3")
	if res.Server == nil || res.Server.Source != base+"/metrics" || res.Server.RSS == 0 {
		t.Errorf("server stats %+v, want them from %s/metrics", res.Server, base)
	}
	if _, ok := res.ServerMetrics["sluice_server_connections"]; !ok {
		t.Errorf("server metrics %v lack sluice_server_connections", res.ServerMetrics)
	}
}

// TestBenchCountsRefusalsNotLosses: publishes refused by the edge's rate
// limit are counted as refusals, not lost messages, and the run fails
// (exit 1) naming the setting to raise, after printing its result.
func TestBenchCountsRefusalsNotLosses(t *testing.T) {
	url := startBenchEdge(t, server.Limits{RequestsPerSecond: 20})
	res, code, errw := benchRun(t, url, "fanout", "--subscribers", "3", "--duration", "0.5")
	if code != 1 || !strings.Contains(errw, "too_many_requests") || !strings.Contains(errw, "limits.requests_per_second") {
		t.Errorf("bench exited %d, stderr %q; want 1, naming too_many_requests and limits.requests_per_second", code, errw)
	}
	if res.Errors["publish refused"].Count == 0 {
		t.Errorf("errors %v, want publishes refused by the rate limit", res.Errors)
	}
	if !strings.Contains(res.Errors["publish refused"].First, "too_many_requests") {
		t.Errorf("first refusal %q", res.Errors["publish refused"].First)
	}
	if res.Lost != 0 || res.Delivered == 0 {
		t.Errorf("lost %d, delivered %d", res.Lost, res.Delivered)
	}
}

func TestBenchTableAndInterrupt(t *testing.T) {
	url := startBenchEdge(t, server.Limits{RequestsPerSecond: 1_000_000})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	errw := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runBench(ctx, []string{"fanout", "--url", url, "--subscribers", "3", "--warmup", "0.1", "--duration", "1h"},
			stdio{out: &out, errw: errw})
	}()
	poll.Until(t, "a live line of the window", func() bool {
		return strings.Contains(strings.Join(errw.lines(), "\n"), "measure")
	})
	cancel() // what Ctrl-C does
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("interrupted bench: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("bench did not stop")
	}
	table := strings.Join(out.lines(), "\n")
	for _, want := range []string{"sluice: fanout (interrupted)", "delivered", "lost 0, duplicated 0, reordered 0"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestBenchProfilesTheGenerator(t *testing.T) {
	url := startBenchEdge(t, server.Limits{RequestsPerSecond: 1_000_000})
	dir := t.TempDir()
	window, ramp := filepath.Join(dir, "window.pprof"), filepath.Join(dir, "ramp.pprof")
	res := benchJSON(t, url, "fanout", "--subscribers", "5", "--duration", "0.3",
		"--cpuprofile", window, "--connect-cpuprofile", ramp)
	if res.Delivered == 0 {
		t.Errorf("delivered %d", res.Delivered)
	}
	for _, path := range []string{window, ramp} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		// A CPU profile is a gzipped protocol buffer.
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s is not a profile: %v", path, err)
		}
		if n, err := io.Copy(io.Discard, zr); err != nil || n == 0 {
			t.Errorf("%s: %d bytes of profile, %v", path, n, err)
		}
	}
}

func TestBenchUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no scenario", nil},
		{"unknown scenario", []string{"storm"}},
		{"two scenarios", []string{"fanout", "idle"}},
		{"profile without admin url", []string{"fanout", "--edge-profile", "cpu.pprof"}},
		{"idle with publishers", []string{"idle", "--publishers", "2"}},
		{"message below the stamp", []string{"fanout", "--size", "10"}},
		{"more connections than files", []string{"idle", "--subscribers", "10000000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			err := runBench(context.Background(), tt.args, stdio{out: &out, errw: &errw})
			if !errors.Is(err, errUsage) {
				t.Errorf("error = %v, want a usage error", err)
			}
		})
	}
}

func TestMetricsURL(t *testing.T) {
	tests := []struct{ name, edge, flag, want string }{
		{"beside ws", "ws://127.0.0.1:8080", "", "http://127.0.0.1:8080/metrics"},
		{"beside wss", "wss://edge.example.com/v2?appkey=x", "", "https://edge.example.com/metrics"},
		{"explicit", "ws://127.0.0.1:8080", "http://127.0.0.1:9090/metrics", "http://127.0.0.1:9090/metrics"},
		{"off", "ws://127.0.0.1:8080", "off", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metricsURL(tt.edge, tt.flag); got != tt.want {
				t.Errorf("metricsURL = %q, want %q", got, tt.want)
			}
		})
	}
}

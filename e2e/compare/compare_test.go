package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestQuickComparison runs a tiny comparison end to end: both servers as
// child processes (Centrifugo is built into the user cache on the first
// run, which takes minutes), every scenario, the summary and the
// generated files.
func TestQuickComparison(t *testing.T) {
	var out, errw bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	results := t.TempDir()
	args := []string{"--quick", "--quiet", "--duration", "1s", "--warmup", "300ms",
		"--fanout-subscribers", "20", "--channels", "20", "--idle", "100", "--results-dir", results}
	if err := run(ctx, args, &out, &errw); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errw.String())
	}
	text := out.String()
	for _, want := range []string{"sluice: fanout", "centrifugo: fanout", "sluice: channels", "centrifugo: idle"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	for _, row := range [][2]string{{fanoutMax, "delivered msgs/s"}, {idle, "ramp connections/s"}} {
		if !hasRow(text, row[0], row[1]) {
			t.Errorf("summary lacks the row %q %q:\n%s", row[0], row[1], text)
		}
	}
	for _, sys := range []string{"sluice", "centrifugo"} {
		for _, row := range strings.Split(text, "\n") {
			if strings.HasPrefix(row, sys+" on ") {
				t.Errorf("a run failed: %s", row)
			}
		}
	}
	// Both systems deliver everything at this load.
	for _, row := range strings.Split(text, "\n") {
		f := strings.Fields(row)
		if len(f) > 3 && f[1] == "lost/dup/reordered" && (f[2] != "0/0/0" || f[3] != "0/0/0") {
			t.Errorf("integrity row %q", row)
		}
	}
	checkQuickResults(t, results)
}

// checkQuickResults checks the files of the quick run: one per default
// scenario, each with this machine and its figures, and the index.
func checkQuickResults(t *testing.T, dir string) {
	t.Helper()
	index := readText(t, filepath.Join(dir, indexFile))
	for _, name := range scenarioNames {
		md := readText(t, filepath.Join(dir, reportPrefix+name+".md"))
		for _, prefix := range []string{"- command: `make bench-compare COMPARE_FLAGS='--channels=20 ", "- machine: ", "- Sluice: ",
			"- Centrifugo: ", "| " + name + " | lost/dup/reordered | 0/0/0 | 0/0/0 |", "| 1 | sluice | ", "| 1 | centrifugo | "} {
			if !strings.Contains(md, "\n"+prefix) {
				t.Errorf("%s: no line starts %q:\n%s", name, prefix, md)
			}
		}
		if !strings.Contains(index, "| ["+name+"]("+reportPrefix+name+".md) |") {
			t.Errorf("%s lacks %s:\n%s", indexFile, name, index)
		}
	}
}

// hasRow reports whether the summary has a row for a scenario's metric
// with both systems' figures.
func hasRow(text, scenario, metric string) bool {
	for _, row := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(row, scenario+" ")
		if !ok || !strings.HasPrefix(strings.TrimSpace(rest), metric) {
			continue
		}
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(rest), metric))
		return len(f) >= 3 && f[0] != "-" && f[1] != "-"
	}
	return false
}

func TestSummaryJudgesTargets(t *testing.T) {
	res := func(rate, cpuPerDelivery, p99 float64, lost uint64) *loadgen.Result {
		return &loadgen.Result{
			DeliverRate: rate, Delivered: 1000, Latency: loadgen.LatencyStats{P99: p99}, Lost: lost,
			Server: &loadgen.ProcStats{PerDelivery: cpuPerDelivery, CPU: 1},
		}
	}
	tests := []struct {
		name       string
		sluice     *loadgen.Result
		wantMissed int
		wantRows   []string
	}{
		{"all met", res(300, 1, 5, 0), 0, []string{">= 3x  PASS", "<= 0.33x  PASS", "3.00x"}},
		{"rate missed", res(200, 1, 5, 0), 1, []string{">= 3x  FAIL", "<= 0.33x  PASS"}},
		{"loss fails", res(300, 1, 5, 2), 1, []string{"2/0/0", "== 0  FAIL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := []outcome{
				{Scenario: fanoutMax, System: "sluice", Result: tt.sluice},
				{Scenario: fanoutMax, System: "centrifugo", Result: res(100, 3, 10, 0)},
			}
			var out bytes.Buffer
			missed := writeSummary(&out, []spec{{name: fanoutMax}}, all)
			if missed != tt.wantMissed {
				t.Errorf("missed %d targets, want %d:\n%s", missed, tt.wantMissed, out.String())
			}
			for _, want := range tt.wantRows {
				if !strings.Contains(out.String(), want) {
					t.Errorf("summary lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestMedian(t *testing.T) {
	all := []outcome{
		{Scenario: idle, System: "sluice", Result: &loadgen.Result{DeliverRate: 3}},
		{Scenario: idle, System: "sluice", Result: &loadgen.Result{DeliverRate: 1}},
		{Scenario: idle, System: "sluice", Result: &loadgen.Result{DeliverRate: 10}},
		{Scenario: idle, System: "sluice", Error: "crashed"},
	}
	if got := median(all, idle, "sluice", deliverRate); got != 3 {
		t.Errorf("median = %v, want 3", got)
	}
	if got := median(all[:2], idle, "sluice", deliverRate); got != 2 {
		t.Errorf("median of two = %v, want 2", got)
	}
}

func TestQuickDefaultsKeepExplicitFlags(t *testing.T) {
	o, err := parseFlags([]string{"--quick", "--idle", "500"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.idle != 500 || o.fanoutSubscribers != 200 || o.channels != 500 || o.duration != 5*time.Second {
		t.Errorf("quick options %+v", o)
	}
	if _, err := plan(&options{only: "storm", size: 128}); err == nil {
		t.Error("an unknown scenario was accepted")
	}
}

func TestPlanClusterScenarios(t *testing.T) {
	o, err := parseFlags([]string{"--quick", "--only", "cluster"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	specs, err := plan(o)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		topo     topology
		scenario loadgen.Scenario
		rate     float64
	}{
		fanoutCluster:     {twoNodes, loadgen.Fanout, 0},
		fanoutClusterRate: {twoNodes, loadgen.Fanout, 40},
		channelsCluster:   {twoNodes, loadgen.Channels, 0},
		channelsDurable:   {durableNode, loadgen.Channels, 0},
	}
	if len(specs) != len(want) {
		t.Fatalf("--only cluster planned %d scenarios, want %d", len(specs), len(want))
	}
	for _, sp := range specs {
		w, ok := want[sp.name]
		if !ok {
			t.Errorf("unexpected scenario %q", sp.name)
			continue
		}
		// The quick sizes apply to the cluster scenarios too.
		if sp.topo != w.topo || sp.cfg.Scenario != w.scenario || sp.cfg.Rate != w.rate || sp.cfg.Subscribers == 0 ||
			(w.scenario == loadgen.Fanout && sp.cfg.Subscribers != 200) || sp.cfg.Duration != 5*time.Second {
			t.Errorf("%s: topo %d, config %+v", sp.name, sp.topo, sp.cfg)
		}
	}
	def, err := plan(&options{size: 128, fanoutSubscribers: 10, channels: 10, perChannel: 2, channelPublishers: 2, idle: 10, fanoutRate: 40})
	if err != nil {
		t.Fatal(err)
	}
	for _, sp := range def {
		if sp.topo != oneNode {
			t.Errorf("the default set holds %s", sp.name)
		}
	}
}

func TestSystemsForDurable(t *testing.T) {
	both := []system{sluiceSystem(), centrifugoSystem()}
	names := func(ss []system) string {
		var n []string
		for _, s := range ss {
			n = append(n, s.name)
		}
		return strings.Join(n, ",")
	}
	if got := names(systemsFor(&options{floor: true}, spec{topo: durableNode}, both)); got != durableSystem+",sluice" {
		t.Errorf("durable scenario runs %q", got)
	}
	if got := names(systemsFor(&options{floor: true}, spec{topo: durableNode}, both[1:])); got != "" {
		t.Errorf("durable scenario without sluice runs %q", got)
	}
	if got := names(systemsFor(&options{floor: true}, spec{topo: twoNodes}, both)); got != "sluice,centrifugo" {
		t.Errorf("cluster scenario runs %q", got)
	}
}

func TestSummaryJudgesDurable(t *testing.T) {
	res := func(rate float64) *loadgen.Result {
		return &loadgen.Result{DeliverRate: rate, Delivered: 1000, Server: &loadgen.ProcStats{CPU: 1}}
	}
	tests := []struct {
		name       string
		durable    float64
		wantMissed int
		want       string
	}{
		{"kept 80%", 80, 0, ">= 0.7x  PASS"},
		{"kept 60%", 60, 1, ">= 0.7x  FAIL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all := []outcome{
				{Scenario: channelsDurable, System: durableSystem, Result: res(tt.durable)},
				{Scenario: channelsDurable, System: "sluice", Result: res(100)},
			}
			var out bytes.Buffer
			missed := writeSummary(&out, []spec{{name: channelsDurable, topo: durableNode}}, all)
			text := out.String()
			if missed != tt.wantMissed || !strings.Contains(text, tt.want) || !strings.Contains(text, "Durable edge") {
				t.Errorf("missed %d, want %d and %q:\n%s", missed, tt.wantMissed, tt.want, text)
			}
			if strings.Contains(text, "Side by side") {
				t.Errorf("a durable-only summary printed the peer table:\n%s", text)
			}
		})
	}
}

func TestMissingRedisNamesApt(t *testing.T) {
	err := checkRedis(t.TempDir() + "/redis-server")
	if !errors.Is(err, errNoRedis) || !strings.Contains(err.Error(), redisApt) {
		t.Errorf("checkRedis = %v", err)
	}
}

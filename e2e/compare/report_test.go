package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// fakeRun is the header of a run that never ran.
func fakeRun() runInfo {
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	return runInfo{
		Command: "make bench-compare COMPARE_FLAGS='--only=fanout-rate,channels-durable --rounds=2'",
		Started: start, Finished: start.Add(90 * time.Second), LoadStart: "3.10 2.00 1.00", LoadEnd: "4.20 2.50 1.10",
		Machine: machine{CPU: "Test CPU", CPUs: 2, Memory: 24 << 30, Kernel: "linux 6.1.0", Go: "go1.26.0"},
		Sluice:  "built from commit 0123456789ab", Centrifugo: "Centrifugo v6.9.1", Rounds: 2,
		Notes: "a shared machine,\nloaded",
	}
}

// fakeResult is a result with the figures the files show.
func fakeResult(rate, perDelivery, p99 float64) *loadgen.Result {
	return &loadgen.Result{
		DeliverRate: rate, Delivered: 1000, Latency: loadgen.LatencyStats{P50: p99 / 2, P99: p99, Max: 2 * p99},
		Connect: loadgen.ConnectStats{Connected: 20, Rate: 500},
		Server:  &loadgen.ProcStats{PerDelivery: perDelivery, CPU: 1, RSS: 50 << 20, PerConnection: 10 << 10},
	}
}

// fakeOutcomes are two rounds of fanout-rate on the two systems and the
// floor (one of Centrifugo's failed), and one of channels-durable.
func fakeOutcomes() []outcome {
	return []outcome{
		{Scenario: fanoutRate, System: "sluice", Round: 1, Result: fakeResult(40000, 4, 10)},
		{Scenario: fanoutRate, System: "centrifugo", Round: 1, Result: fakeResult(40000, 8, 25)},
		{Scenario: fanoutRate, System: floorName, Round: 1, Result: fakeResult(40000, 5, 9)},
		{Scenario: fanoutRate, System: "centrifugo", Round: 2, Error: "centrifugo: during the run,\nexit status 1"},
		{Scenario: fanoutRate, System: "sluice", Round: 2, Result: fakeResult(40000, 4, 12)},
		{Scenario: fanoutRate, System: floorName, Round: 2, Result: fakeResult(40000, 5, 9)},
		{Scenario: channelsDurable, System: durableSystem, Round: 1, Result: fakeResult(80, 16, 20)},
		{Scenario: channelsDurable, System: "sluice", Round: 1, Result: fakeResult(100, 9, 15)},
	}
}

var fakeSpecs = []spec{
	{name: fanoutRate, title: "1 publisher at 40 msgs/s, 20 subscribers", floor: true},
	{name: channelsDurable, title: "2 channels x 2 subscribers, Sluice with --data-dir vs in memory", topo: durableNode},
}

// TestResultsFiles checks the generated files of a run: each scenario's
// header, figures and rounds, its JSON, and the index.
func TestResultsFiles(t *testing.T) {
	dir := t.TempDir()
	written, err := writeResults(dir, fakeRun(), fakeSpecs, fakeOutcomes())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"compare-channels-durable.json", "compare-channels-durable.md", "compare-fanout-rate.json", "compare-fanout-rate.md", indexFile}
	var got []string
	for _, p := range written {
		got = append(got, filepath.Base(p))
	}
	if !slices.Equal(got, want) {
		t.Errorf("wrote %v, want %v", got, want)
	}

	fanout := readText(t, filepath.Join(dir, "compare-fanout-rate.md"))
	for _, line := range []string{
		"# e2e/compare: fanout-rate",
		"<!-- " + generatedBy + " -->",
		"- command: `make bench-compare COMPARE_FLAGS='--only=fanout-rate,channels-durable --rounds=2'`",
		"- date (UTC) of the run: 2026-12-03 10:00:00 to 2026-12-03 10:01:30",
		"- machine: 2 x Test CPU, 24.0 GiB memory, linux 6.1.0",
		"- load average (1, 5, 15 minutes): 3.10 2.00 1.00 at the start, 4.20 2.50 1.10 at the end",
		"- Go: go1.26.0",
		"- Sluice: built from commit 0123456789ab",
		"- Centrifugo: Centrifugo v6.9.1",
		"- systems: sluice, centrifugo, floor; rounds: 2, the systems' order alternating between rounds",
		"- notes: a shared machine, loaded",
		// The medians: Sluice's p99 of 10 and 12 ms, Centrifugo's one round.
		"| fanout-rate | p99 latency | 11.00ms | 25.00ms | 0.44x | <= 0.50x  PASS |",
		"| fanout-rate | lost/dup/reordered | 0/0/0 | 0/0/0 |  | == 0  PASS |",
		"| fanout-rate | 5.00µs | 4.00µs | 8.00µs | 0.80x | 1.60x |  |",
		"| 1 | sluice | 20 (500/s) | 40.0k | 5.00ms / 10.00ms / 20.00ms | - | 4.00µs | 50.0MiB (10.0KiB) | - | 0/0/0 |  |",
		"| 2 | centrifugo | - | - | - | - | - | - | - | - | centrifugo: during the run, exit status 1 |",
		"| 2 | floor | 20 (500/s) | 40.0k | 4.50ms / 9.00ms / 18.00ms | - | 5.00µs | 50.0MiB (10.0KiB) | - | 0/0/0 |  |",
	} {
		if !hasLine(fanout, line) {
			t.Errorf("compare-fanout-rate.md lacks the line\n%s\nin:\n%s", line, fanout)
		}
	}
	if n := strings.Count(fanout, "\n| 1 | ") + strings.Count(fanout, "\n| 2 | "); n != 6 {
		t.Errorf("compare-fanout-rate.md has %d round rows, want 6:\n%s", n, fanout)
	}

	durable := readText(t, filepath.Join(dir, "compare-channels-durable.md"))
	for _, line := range []string{
		"| channels-durable | delivered msgs/s | 80 | 100 | 0.80x | >= 0.7x  PASS |",
		"| 1 | sluice-durable | 20 (500/s) | 80 | 10.00ms / 20.00ms / 40.00ms | - | 16.00µs | 50.0MiB (10.0KiB) | - | 0/0/0 |  |",
	} {
		if !hasLine(durable, line) {
			t.Errorf("compare-channels-durable.md lacks the line\n%s\nin:\n%s", line, durable)
		}
	}
	if strings.Contains(durable, "- Centrifugo:") {
		t.Errorf("a scenario Centrifugo did not run names it:\n%s", durable)
	}

	var r scenarioReport
	if err := json.Unmarshal([]byte(readText(t, filepath.Join(dir, "compare-fanout-rate.json"))), &r); err != nil {
		t.Fatal(err)
	}
	if r.Scenario != fanoutRate || len(r.Outcomes) != 6 || r.Run.Command != fakeRun().Command || !r.Run.Started.Equal(fakeRun().Started) {
		t.Errorf("compare-fanout-rate.json holds %+v", r)
	}

	index := readText(t, filepath.Join(dir, indexFile))
	rows := tableRows(index, "| [")
	if len(rows) != 2 || !strings.HasPrefix(rows[0], "| [fanout-rate](compare-fanout-rate.md) | 1 publisher at 40 msgs/s") ||
		!strings.HasPrefix(rows[1], "| [channels-durable](compare-channels-durable.md) |") ||
		!strings.Contains(rows[0], "| 2026-12-03 10:00:00 | `make bench-compare") || !strings.HasSuffix(rows[0], "| 3.10 2.00 1.00 | a shared machine, loaded |") {
		t.Errorf("compare.md rows:\n%s", strings.Join(rows, "\n"))
	}
}

// TestResultsKeepOtherScenarios checks that a run replaces the files of
// the scenarios it ran only, and that the index still lists the others.
func TestResultsKeepOtherScenarios(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeResults(dir, fakeRun(), fakeSpecs, fakeOutcomes()); err != nil {
		t.Fatal(err)
	}
	later := fakeRun()
	later.Started = later.Started.Add(time.Hour)
	later.Command = "make bench-compare COMPARE_FLAGS=--only=channels-durable"
	if _, err := writeResults(dir, later, fakeSpecs[1:], fakeOutcomes()); err != nil {
		t.Fatal(err)
	}
	if got := readText(t, filepath.Join(dir, "compare-fanout-rate.md")); !strings.Contains(got, "- date (UTC) of the run: 2026-12-03 10:00:00") {
		t.Errorf("the fanout-rate file changed:\n%s", got)
	}
	rows := tableRows(readText(t, filepath.Join(dir, indexFile)), "| [")
	if len(rows) != 2 || !strings.Contains(rows[1], "| 2026-12-03 11:00:00 | `make bench-compare COMPARE_FLAGS=--only=channels-durable` |") {
		t.Errorf("compare.md rows:\n%s", strings.Join(rows, "\n"))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left %s behind", e.Name())
		}
	}
}

// TestCommandLine checks the command the files give: the flags as
// parsed, without those that change nothing measured.
func TestCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "make bench-compare"},
		{[]string{"--notes", "busy", "--no-results", "--quiet", "--results-dir", "/tmp/x"}, "make bench-compare"},
		{[]string{"--only", "fanout-rate", "--rounds", "1", "--duration", "5s"},
			"make bench-compare COMPARE_FLAGS='--duration=5s --only=fanout-rate --rounds=1'"},
		{[]string{"--quick", "--floor=false"}, "make bench-compare COMPARE_FLAGS='--floor=false --quick'"},
		{[]string{"--sluice-bin", "/tmp/it's here"}, `make bench-compare COMPARE_FLAGS='--sluice-bin='\''/tmp/it'\''\'\'''\''s here'\'''`},
	} {
		o, err := parseFlags(tc.args, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if o.command != tc.want {
			t.Errorf("%q: command\n%s\nwant\n%s", tc.args, o.command, tc.want)
		}
	}
	o, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.resultsDir != filepath.Join("..", "..", "docs", "benchmarks") || o.noResults {
		t.Errorf("results go to %q (no-results %v) by default", o.resultsDir, o.noResults)
	}
}

// TestReadMachine reads a machine's description from a fake /proc.
func TestReadMachine(t *testing.T) {
	proc := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		path := filepath.Join(proc, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13\n")
	write("meminfo", "MemTotal:       24683784 kB\nMemFree:        1000 kB\n")
	write("sys/kernel/osrelease", "6.1.0-test\n")
	write("loadavg", "15.00 11.98 7.93 15/253 11042\n")
	m := readMachine(proc)
	if m.CPU != "AMD EPYC 7B13" || m.CPUs != 2 || m.Memory != 24683784*1024 || !strings.HasSuffix(m.Kernel, " 6.1.0-test") || m.Go == "" {
		t.Errorf("machine %+v", m)
	}
	if got := m.String(); !strings.HasPrefix(got, "2 x AMD EPYC 7B13, 23.5 GiB memory, ") {
		t.Errorf("machine reads %q", got)
	}
	if got := loadAverage(proc); got != "15.00 11.98 7.93" {
		t.Errorf("load average %q", got)
	}
	if got := loadAverage(t.TempDir()); got != "" {
		t.Errorf("a missing loadavg reads %q", got)
	}
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hasLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\n"), line)
}

// tableRows are the lines of text that start with prefix.
func tableRows(text, prefix string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// TestCentrifugoVersionFallback checks what a binary that cannot be read
// is reported as.
func TestCentrifugoVersionFallback(t *testing.T) {
	got := centrifugoVersion(t.Context(), filepath.Join(t.TempDir(), "centrifugo"))
	if got != centrifugoModule+" (not read from the binary)" {
		t.Errorf("centrifugoVersion = %q", got)
	}
}

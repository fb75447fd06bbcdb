package main

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// metric is one row of the summary: a figure of both systems, and the
// target Sluice must meet, if any.
type metric struct {
	scenario string
	name     string
	value    func(*loadgen.Result) float64
	format   func(float64) string
	// target says what Sluice must reach, given both medians (c is NaN
	// when Centrifugo did not run); nil for an informative row.
	target func(s, c float64) (text string, ok bool)
	// peer: the target compares with Centrifugo, so it cannot be judged
	// without it.
	peer bool
}

const kib = 1024

// metrics are the summary's rows, the targets first.
var metrics = []metric{
	{fanoutMax, "delivered msgs/s", deliverRate, loadgen.Count, atLeastRatio(3), true},
	{fanoutMax, "server cpu per delivery", cpuPerDelivery, micros, atMostRatio(1.0 / 3), true},
	{fanoutRate, "p99 latency", p99, loadgen.Millis, atMostRatio(0.5), true},
	{channels, "delivered msgs/s", deliverRate, loadgen.Count, atLeastRatio(2), true},
	// JSON clients, one publish in flight (issue 19's targets).
	{channelsJSON, "delivered msgs/s", deliverRate, loadgen.Count, atLeastRatio(1.5), true},
	{channelsJSON, "server cpu per delivery", cpuPerDelivery, micros, atMostRatio(0.6), true},
	{fanoutRateJSON, "p99 latency", p99, loadgen.Millis, atMostRatio(0.5), true},
	{idle, "server rss per connection", rssPerConn, bytesText, idleMemory, false},
	{idle, "ramp connections/s", connectRate, loadgen.Count, rampRate, false},
	{fanoutMax, "p99 latency", p99, loadgen.Millis, nil, false},
	{fanoutRate, "delivered msgs/s", deliverRate, loadgen.Count, nil, false},
	{fanoutRate, "server cpu per delivery", cpuPerDelivery, micros, nil, false},
	{channels, "p99 latency", p99, loadgen.Millis, nil, false},
	{channels, "server cpu per delivery", cpuPerDelivery, micros, nil, false},
	{channelsJSON, "p99 latency", p99, loadgen.Millis, nil, false},
	{channelsJSON, "publish ack p99", ackP99, loadgen.Millis, nil, false},
	{fanoutRateJSON, "delivered msgs/s", deliverRate, loadgen.Count, nil, false},
	{fanoutRateJSON, "server cpu per delivery", cpuPerDelivery, micros, nil, false},
	// Two nodes each (the cluster scenarios).
	{fanoutCluster, "delivered msgs/s", deliverRate, loadgen.Count, atLeastRatio(3), true},
	{fanoutClusterRate, "p99 latency", p99, loadgen.Millis, atMostRatio(0.5), true},
	{channelsCluster, "delivered msgs/s", deliverRate, loadgen.Count, atLeastRatio(3), true},
	{fanoutCluster, "p99 latency", p99, loadgen.Millis, nil, false},
	{fanoutCluster, "server cpu per delivery", cpuPerDelivery, micros, nil, false},
	{fanoutClusterRate, "p99 latency on node 2", nodeP99(1), loadgen.Millis, nil, false},
	{fanoutClusterRate, "delivered msgs/s", deliverRate, loadgen.Count, nil, false},
	{channelsCluster, "p99 latency", p99, loadgen.Millis, nil, false},
	{channelsCluster, "server cpu per delivery", cpuPerDelivery, micros, nil, false},
	{channelsCluster, "publish ack p99", ackP99, loadgen.Millis, nil, false},
}

// durableMetrics are the rows of the durable edge against the in-memory
// one, a table of their own: the peer there is Sluice.
var durableMetrics = []metric{
	{channelsDurable, "delivered msgs/s", deliverRate, loadgen.Count, atLeastRatio(0.7), true},
	{channelsDurable, "p99 latency", p99, loadgen.Millis, nil, false},
	{channelsDurable, "publish ack p99", ackP99, loadgen.Millis, nil, false},
	{channelsDurable, "server cpu per delivery", cpuPerDelivery, micros, nil, false},
}

func deliverRate(r *loadgen.Result) float64 { return r.DeliverRate }
func p99(r *loadgen.Result) float64         { return r.Latency.P99 }
func connectRate(r *loadgen.Result) float64 { return r.Connect.Rate }
func ackP99(r *loadgen.Result) float64      { return r.PublishLatency.P99 }

// nodeP99 is the p99 latency to the subscribers of node i (from 0): the
// figure across nodes.
func nodeP99(i int) func(*loadgen.Result) float64 {
	return func(r *loadgen.Result) float64 {
		if i >= len(r.Nodes) {
			return math.NaN()
		}
		return r.Nodes[i].Latency.P99
	}
}

func cpuPerDelivery(r *loadgen.Result) float64 {
	if r.Server == nil || r.Delivered == 0 {
		return math.NaN()
	}
	return r.Server.PerDelivery
}

func rssPerConn(r *loadgen.Result) float64 {
	if r.Server == nil {
		return math.NaN()
	}
	return r.Server.PerConnection
}

func micros(v float64) string    { return fmt.Sprintf("%.2fµs", v) }
func bytesText(v float64) string { return loadgen.Bytes(v) }

// atLeastRatio: Sluice's figure at least n times Centrifugo's.
func atLeastRatio(n float64) func(s, c float64) (string, bool) {
	return func(s, c float64) (string, bool) { return fmt.Sprintf(">= %gx", n), s >= n*c }
}

// atMostRatio: Sluice's figure at most n times Centrifugo's.
func atMostRatio(n float64) func(s, c float64) (string, bool) {
	return func(s, c float64) (string, bool) { return fmt.Sprintf("<= %.2fx", n), s <= n*c }
}

func idleMemory(s, c float64) (string, bool) {
	ok := s <= 16*kib
	if !math.IsNaN(c) {
		ok = ok && s <= 0.6*c
	}
	return "<= 16KiB, <= 0.6x", ok
}

func rampRate(s, _ float64) (string, bool) { return ">= 5000/s", s >= 5000 }

// The summary's table titles.
const (
	sideBySideTitle = "Side by side (medians over rounds; same machine, same run, loopback)"
	durableTitle    = "Durable edge (--data-dir) vs the in-memory edge (medians over rounds)"
)

// writeSummary prints the side-by-side table (and, when the durable
// scenario ran, the durable edge's against the in-memory one) and returns
// how many targets Sluice missed.
func writeSummary(w io.Writer, specs []spec, all []outcome) int {
	tables, missed := summaryTables(specs, all)
	for _, t := range tables {
		t.writeText(w)
	}
	return missed
}

// summaryTables are the summary's tables for the scenarios of specs, and
// how many targets Sluice missed in them: what the terminal shows and
// what the generated files hold.
func summaryTables(specs []spec, all []outcome) ([]table, int) {
	var peers, durable []spec
	for _, sp := range specs {
		if sp.topo == durableNode {
			durable = append(durable, sp)
		} else {
			peers = append(peers, sp)
		}
	}
	var tables []table
	missed := 0
	if len(peers) > 0 || len(durable) == 0 {
		t, m := metricTable(sideBySideTitle, peers, metrics, all, "sluice", "centrifugo")
		tables = append(tables, t)
		missed += m
		if t, m := floorTable(peers, all, "sluice", "centrifugo"); len(t.rows) > 0 {
			tables = append(tables, t)
			missed += m
		}
	}
	if len(durable) > 0 {
		t, m := metricTable(durableTitle, durable, durableMetrics, all, durableSystem, "sluice")
		tables = append(tables, t)
		missed += m
	}
	return tables, missed
}

// metricTable is the rows of ms for the scenarios that ran, system a
// (judged) against system b, and how many targets a missed.
func metricTable(title string, specs []spec, ms []metric, all []outcome, a, b string) (table, int) {
	ran := map[string]bool{}
	for _, sp := range specs {
		ran[sp.name] = true
	}
	t := table{title: title, header: []string{"scenario", "metric", a, b, "ratio", "target"}}
	missed := 0
	for _, m := range ms {
		if !ran[m.scenario] {
			continue
		}
		s, c := median(all, m.scenario, a, m.value), median(all, m.scenario, b, m.value)
		target := ""
		switch {
		case m.target == nil:
		case math.IsNaN(s):
			target = "no figure  FAIL"
			missed++
		case m.peer && math.IsNaN(c):
			text, _ := m.target(s, c)
			target = text + "  (no peer)"
		default:
			text, ok := m.target(s, c)
			target = text + "  " + verdict(ok)
			if !ok {
				missed++
			}
		}
		t.rows = append(t.rows, []string{m.scenario, m.name, show(s, m.format), show(c, m.format), ratio(s, c), target})
	}
	missed += processRows(&t, specs, all, a, b)
	return t, missed
}

// processRows adds, per scenario, the integrity of each system's
// deliveries (a target for system a: nothing lost, duplicated or
// reordered) and each process's CPU time.
func processRows(t *table, specs []spec, all []outcome, a, b string) int {
	missed := 0
	for _, sp := range specs {
		in := func(sys string) string {
			lost, dup, reord := sum(all, sp.name, sys)
			return fmt.Sprintf("%d/%d/%d", lost, dup, reord)
		}
		sl := in(a)
		ok := sl == "0/0/0" && ranOK(all, sp.name, a)
		if !ok {
			missed++
		}
		t.rows = append(t.rows, []string{sp.name, "lost/dup/reordered", sl, in(b), "", "== 0  " + verdict(ok)})
		cpu := func(sys string, f func(*loadgen.Result) *loadgen.ProcStats) string {
			v := median(all, sp.name, sys, func(r *loadgen.Result) float64 {
				if p := f(r); p != nil {
					return p.CPU
				}
				return math.NaN()
			})
			return show(v, func(v float64) string { return fmt.Sprintf("%.2fs", v) })
		}
		server := func(r *loadgen.Result) *loadgen.ProcStats { return r.Server }
		gen := func(r *loadgen.Result) *loadgen.ProcStats { return r.Generator }
		t.rows = append(t.rows,
			[]string{sp.name, "cpu time: server", cpu(a, server), cpu(b, server), "", ""},
			[]string{sp.name, "cpu time: load generator", cpu(a, gen), cpu(b, gen), "", ""})
	}
	return missed
}

// ranOK reports whether a system ran a scenario without failing.
func ranOK(all []outcome, scenario, sys string) bool {
	n := 0
	for _, o := range all {
		if o.Scenario == scenario && o.System == sys {
			if o.Error != "" || o.Result == nil {
				return false
			}
			n++
		}
	}
	return n > 0
}

func verdict(ok bool) string {
	if ok {
		return "PASS"
	}
	return "FAIL"
}

// median is the median of a figure over a system's successful runs of a
// scenario; NaN when there is none.
func median(all []outcome, scenario, sys string, f func(*loadgen.Result) float64) float64 {
	var vs []float64
	for _, o := range all {
		if o.Scenario == scenario && o.System == sys && o.Result != nil && o.Error == "" {
			if v := f(o.Result); !math.IsNaN(v) {
				vs = append(vs, v)
			}
		}
	}
	if len(vs) == 0 {
		return math.NaN()
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2
	}
	return vs[len(vs)/2]
}

// sum adds up the integrity counts over a system's runs of a scenario.
func sum(all []outcome, scenario, sys string) (lost, dup, reord uint64) {
	for _, o := range all {
		if o.Scenario == scenario && o.System == sys && o.Result != nil {
			lost += o.Result.Lost
			dup += o.Result.Duplicates
			reord += o.Result.Reordered
		}
	}
	return lost, dup, reord
}

func show(v float64, format func(float64) string) string {
	if math.IsNaN(v) {
		return "-"
	}
	return format(v)
}

func ratio(s, c float64) string {
	if math.IsNaN(s) || math.IsNaN(c) || c == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", s/c)
}

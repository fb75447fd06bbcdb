package loadgen

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// WriteText writes the result as a table for people.
func (res *Result) WriteText(w io.Writer) error {
	var b strings.Builder
	c := &res.Config
	row := func(name, format string, args ...any) {
		fmt.Fprintf(&b, "  %-12s "+format+"\n", append([]any{name}, args...)...)
	}
	title := fmt.Sprintf("%s: %s", res.Driver, c.Scenario)
	if res.Interrupted {
		title += " (interrupted)"
	}
	b.WriteString(title + "\n")
	row("setup", "%d publishers, %d subscribers on %d channels, %d-byte messages, rate %s, window %d",
		c.Publishers, c.Subscribers, c.Channels, c.MessageBytes, rateText(c.Rate), c.Window)
	cs := res.Connect
	row("connect", "%d of %d in %.2fs (%s/s), dial+subscribe p50 %s p99 %s",
		cs.Connected, cs.Attempted, cs.Seconds, Count(cs.Rate), Millis(cs.Latency.P50), Millis(cs.Latency.P99))
	if c.Scenario == Idle {
		row("window", "%.2fs", res.Window)
	} else {
		res.writeTraffic(row)
		for i, n := range res.Nodes {
			row(fmt.Sprintf("node %d", i+1), "%s", n.text(i == 0))
		}
	}
	if c.Churn > 0 {
		line := fmt.Sprintf("%s/s: %d subscriber connections killed (reset), %d lost and resumed by position",
			Count(c.Churn), res.Killed, res.Errors[ProblemDisconnected].Count)
		if res.KillsMissed > 0 {
			line += fmt.Sprintf("; %d picks found one reconnecting", res.KillsMissed)
		}
		row("churn", "%s", line)
	}
	row("errors", "%d%s", res.ErrorTotal, errorsText(res.Errors))
	if rs := res.Resources; rs != nil {
		row("edge rss", "%s", rs.RSS.text(Bytes, rs.RSSSource))
		row("goroutines", "%s", rs.Goroutines.text(func(v float64) string { return fmt.Sprintf("%.0f", v) }, rs.GoroutineSource))
		if len(rs.Samples) > 0 {
			row("", "sampled every %s over the window (all samples: --json)", Millis(rs.Interval*1000))
		}
	}
	if res.Server != nil {
		row("server", "%s", res.Server.text(c.Scenario))
	}
	if res.Generator != nil {
		row("generator", "%s", res.Generator.text(c.Scenario))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTraffic writes the rows of a scenario with traffic, in two spans
// said in so many words: the window's figures (rates, latencies) and the
// whole run's (what was owed, lost), which also count the warm-up before
// the window and the drain after.
func (res *Result) writeTraffic(row func(name, format string, args ...any)) {
	row("window", "%.2fs measured, after a %s warm-up: published, delivered and latency count the window alone",
		res.Window, res.Config.Warmup)
	row("published", "%d messages in the window (%s/s), ack p50 %s p99 %s", res.Published, Count(res.PublishRate),
		Millis(res.PublishLatency.P50), Millis(res.PublishLatency.P99))
	row("delivered", "%d deliveries in the window (%s/s): one per message per subscriber of its channel",
		res.Delivered, Count(res.DeliverRate))
	l := res.Latency
	row("latency", "p50 %s  p90 %s  p99 %s  p99.9 %s  max %s", Millis(l.P50), Millis(l.P90),
		Millis(l.P99), Millis(l.P999), Millis(l.Max))
	integrity := fmt.Sprintf("whole run (warm-up, window, drain): %d messages stored, so %d deliveries owed; "+
		"lost %d, duplicated %d, reordered %d", res.Stored, res.Expected, res.Lost, res.Duplicates, res.Reordered)
	if res.Unconfirmed > 0 {
		integrity += fmt.Sprintf("; %d publishes unconfirmed (no known outcome: not owed)", res.Unconfirmed)
	}
	row("integrity", "%s", integrity)
}

// text is the node's line of the table.
func (n *NodeResult) text(publishers bool) string {
	name := n.Name
	if publishers {
		name += " (publishers)"
	}
	return fmt.Sprintf("%s: %d subscribers, delivered %d in the window (%s/s), p50 %s  p99 %s, lost %d of the run's %d owed",
		name, n.Subscribers, n.Delivered, Count(n.DeliverRate), Millis(n.Latency.P50), Millis(n.Latency.P99), n.Lost, n.Expected)
}

// text is the process's line of the table.
func (p *ProcStats) text(sc Scenario) string {
	s := fmt.Sprintf("cpu %.2fs (%.0f%% of a core)", p.CPU, 100*p.Cores)
	if sc != Idle && p.PerDelivery > 0 {
		s += fmt.Sprintf(", %.2fµs/delivery", p.PerDelivery)
	}
	s += fmt.Sprintf("; rss %s", Bytes(float64(p.RSS)))
	if p.RSSBefore > 0 {
		s += fmt.Sprintf(" (%s/connection)", Bytes(p.PerConnection))
	}
	if p.ConnectCPU > 0 {
		s += fmt.Sprintf("; ramp cpu %.2fs", p.ConnectCPU)
	}
	return s + " [" + p.Source + "]"
}

func rateText(r float64) string {
	if r == 0 {
		return "max"
	}
	return fmt.Sprintf("%s/s", Count(r))
}

// errorsText lists the errors by kind, with the first message of each.
func errorsText(m map[string]ErrorCount) string {
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "\n      %s: %d (first: %s)", k, m[k].Count, m[k].First)
	}
	return b.String()
}

// text is a trend's line of the table, its values formatted by f.
func (t *Trend) text(f func(float64) string, source string) string {
	if t == nil {
		return "not sampled"
	}
	return fmt.Sprintf("first %s, last %s, min %s, max %s; slope %s/h (second half %s/h) over %d samples [%s]",
		f(t.First), f(t.Last), f(t.Min), f(t.Max), f(t.PerHour), f(t.LatePerHour), t.Samples, source)
}

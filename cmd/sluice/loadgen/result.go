package loadgen

import "time"

// Result is what a run measured. Rates and latencies cover the measured
// window; loss, duplicates and reordering cover the whole run.
type Result struct {
	Driver string `json:"driver"`
	Config Config `json:"config"`
	// Interrupted is set when the run was stopped before its end.
	Interrupted bool `json:"interrupted"`

	Connect ConnectStats `json:"connect"`
	// Window is the measured window's length, in seconds.
	Window float64 `json:"window_s"`

	Published   uint64  `json:"published"`
	PublishRate float64 `json:"publish_rate"`
	// Delivered counts distinct messages received by subscribers in the
	// window; DeliverRate is per second.
	Delivered   uint64  `json:"delivered"`
	DeliverRate float64 `json:"deliver_rate"`
	// Latency is publish to delivery; PublishLatency is publish to
	// acknowledgment.
	Latency        LatencyStats `json:"latency"`
	PublishLatency LatencyStats `json:"publish_latency"`

	// Stored is the messages stored over the whole run (warm-up, window
	// and drain): acknowledged, or sent without asking for an
	// acknowledgment; not those whose publish has no known outcome.
	Stored uint64 `json:"stored"`
	// Expected is the deliveries owed over the whole run: for every
	// subscriber, the messages stored on its channel (acknowledged, or
	// sent without asking for an acknowledgment), and those whose
	// publish has no known outcome that it received.
	Expected uint64 `json:"expected"`
	// Unconfirmed counts the publishes whose outcome is unknown: sent,
	// then the connection dropped or no acknowledgment came in time.
	// They are errors ("publish"), and not owed: one that never arrives
	// is not lost, one that does counts as any other.
	Unconfirmed uint64 `json:"unconfirmed"`
	Lost        uint64 `json:"lost"`
	Duplicates  uint64 `json:"duplicates"`
	Reordered   uint64 `json:"reordered"`

	Errors     map[string]ErrorCount `json:"errors"`
	ErrorTotal uint64                `json:"error_total"`

	// Killed is how many subscriber connections Config.Churn dropped;
	// KillsMissed how many times the subscriber picked was reconnecting
	// already (nothing to drop).
	Killed      uint64 `json:"killed,omitempty"`
	KillsMissed uint64 `json:"kills_missed,omitempty"`
	// Resources is the server's memory and goroutines over the window,
	// when Config.SampleInterval is set and a probe answers.
	Resources *Resources `json:"resources,omitempty"`

	// Server is the server's resource use; nil when no probe was given.
	Server *ProcStats `json:"server,omitempty"`
	// ServerMetrics are the server's own unlabelled metrics at the end of
	// the window, when Options.Metrics is set.
	ServerMetrics map[string]float64 `json:"server_metrics,omitempty"`
	// Generator is this process's own.
	Generator *ProcStats `json:"generator,omitempty"`

	// Nodes, when the driver is a NodeDriver with several nodes, is what
	// each node's subscribers saw, in the order of NodeDriver.Nodes.
	Nodes []NodeResult `json:"nodes,omitempty"`
}

// ConnectStats describe the ramp-up of the subscribers.
type ConnectStats struct {
	Attempted int `json:"attempted"`
	Connected int `json:"connected"`
	// Seconds is from the first dial to the last subscription confirmed;
	// Rate is Connected / Seconds.
	Seconds float64 `json:"seconds"`
	Rate    float64 `json:"rate"`
	// Latency is one connection's dial plus subscribe.
	Latency LatencyStats `json:"latency"`
}

// ProcStats is one process's resource use during a run.
type ProcStats struct {
	Source string `json:"source"`
	// RSS is the resident memory at the end of the window; RSSBefore
	// before the first connection; PerConnection is the growth divided by
	// the connections open (bytes).
	RSS           int64   `json:"rss"`
	RSSBefore     int64   `json:"rss_before"`
	PerConnection float64 `json:"rss_per_connection"`
	// CPU is the CPU time used in the window, in seconds; Cores the same
	// per second of window; PerDelivery the CPU time per delivered
	// message, in microseconds.
	CPU         float64 `json:"cpu_s"`
	Cores       float64 `json:"cores"`
	PerDelivery float64 `json:"cpu_per_delivery_us"`
	// ConnectCPU is the CPU time used while ramping up, in seconds.
	ConnectCPU float64 `json:"connect_cpu_s"`
}

// connectStats summarizes the ramp-up.
func (r *run) connectStats(ramp time.Duration) ConnectStats {
	cs := ConnectStats{Attempted: r.cfg.Subscribers, Seconds: ramp.Seconds(), Latency: r.dialLat.Total()}
	for i, c := range r.subConns {
		if c != nil {
			cs.Connected++
			r.nodes.connected(r.subs[i].node)
		}
	}
	if cs.Seconds > 0 {
		cs.Rate = float64(cs.Connected) / cs.Seconds
	}
	return cs
}

// finish fills in the result once every goroutine has stopped.
func (r *run) finish(interrupted bool) {
	res := &r.res
	res.Driver, res.Config, res.Interrupted = r.d.Name(), r.cfg, interrupted
	a, b := r.marks[markStart], r.marks[markEnd]
	if !a.at.IsZero() && !b.at.IsZero() {
		res.Window = b.at.Sub(a.at).Seconds()
		res.Published = b.published - a.published
		res.Delivered = uint64(b.delivered - a.delivered)
		if res.Window > 0 {
			res.PublishRate = float64(res.Published) / res.Window
			res.DeliverRate = float64(res.Delivered) / res.Window
		}
		r.nodes.rates(res.Window)
		pre, conn := r.marks[markBefore], r.marks[markConnected]
		conns := r.cfg.Connections()
		res.Server = procStats(r.opts.Server, pre.server, conn.server, a.server, b.server, res, conns)
		res.Generator = procStats(r.self, pre.self, conn.self, a.self, b.self, res, conns)
	}
	r.countLoss()
	res.Nodes = r.nodes.res
	res.Errors = r.problems.snapshot()
	res.ErrorTotal = r.problems.total.Load()
}

// countLoss compares what every subscriber received with what was stored
// on its channel.
func (r *run) countLoss() {
	res := &r.res
	for _, l := range r.lanes {
		for i := range l.channels {
			res.Stored += l.seqs[i]
		}
		for _, u := range l.unsure {
			res.Unconfirmed += uint64(len(u))
			res.Stored -= uint64(len(u))
		}
	}
	for _, s := range r.subs {
		s.mu.Lock()
		for i, id := range s.lanes {
			st := &s.streams[i]
			stored, unsure := r.lanes[id].storedOn(s.channel)
			lost := st.Lost(stored)
			// A message whose publish has no known outcome is not owed:
			// missing, it is not lost.
			for _, seq := range unsure {
				if !st.Has(seq) {
					stored--
					lost -= min(lost, 1)
				}
			}
			res.Expected += stored
			res.Lost += lost
			res.Duplicates += st.Duplicates()
			res.Reordered += st.Reordered()
			r.nodes.count(s.node, stored, lost)
		}
		s.mu.Unlock()
	}
}

// procStats computes a process's use from its samples: before the
// connections (optional), connected (optional), and the window's ends.
func procStats(p Probe, before, connected, start, end *Sample, res *Result, conns int) *ProcStats {
	if p == nil || start == nil || end == nil {
		return nil
	}
	ps := &ProcStats{Source: p.Source(), RSS: end.RSS, CPU: (end.CPU - start.CPU).Seconds()}
	if res.Window > 0 {
		ps.Cores = ps.CPU / res.Window
	}
	if res.Delivered > 0 {
		ps.PerDelivery = ps.CPU * 1e6 / float64(res.Delivered)
	}
	if before != nil {
		ps.RSSBefore = before.RSS
		if conns > 0 {
			ps.PerConnection = float64(end.RSS-before.RSS) / float64(conns)
		}
		if connected != nil {
			ps.ConnectCPU = (connected.CPU - before.CPU).Seconds()
		}
	}
	return ps
}

package main

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// The scenarios, in the order of the table.
const (
	fanoutMax  = "fanout-max"
	fanoutRate = "fanout-rate"
	channels   = "channels"
	idle       = "idle"
	// Two nodes of each system (issue 13): the fanout scenarios with the
	// subscribers split over both, the channels scenario across them,
	// and the channels scenario on a durable edge against the in-memory
	// one.
	fanoutCluster     = "fanout-cluster"
	fanoutClusterRate = "fanout-cluster-rate"
	channelsCluster   = "channels-cluster"
	channelsDurable   = "channels-durable"
)

// scenarioNames is the default set. The cluster scenarios are not in it:
// the four add about 7 minutes (measured: 6m43s for three rounds, each
// JetStream cluster formed anew) and need Redis; --only cluster runs
// them.
var scenarioNames = []string{fanoutMax, fanoutRate, channels, idle}

// clusterNames are the scenarios --only cluster stands for.
var clusterNames = []string{fanoutCluster, fanoutClusterRate, channelsCluster, channelsDurable}

// spec is one scenario of the comparison.
type spec struct {
	name  string
	title string
	cfg   loadgen.Config
	topo  topology // how the systems are deployed for it
}

// plan returns the scenarios to run.
func plan(o *options) ([]spec, error) {
	base := loadgen.Config{
		MessageBytes: o.size, Duration: o.duration, Warmup: o.warmup, Drain: o.drain,
		ConnectRate: o.connectRate, ConnectWorkers: o.connectWorkers, Inflight: o.inflight,
	}
	all := map[string]spec{}
	c := base
	c.Scenario, c.Publishers, c.Subscribers = loadgen.Fanout, 1, o.fanoutSubscribers
	all[fanoutMax] = spec{fanoutMax, fmt.Sprintf("1 publisher at max rate, %d subscribers, %d-byte messages", c.Subscribers, o.size), c, oneNode}
	c.Rate = o.fanoutRate
	all[fanoutRate] = spec{fanoutRate, fmt.Sprintf("1 publisher at %g msgs/s, %d subscribers", o.fanoutRate, c.Subscribers), c, oneNode}
	c = base
	c.Scenario, c.Publishers, c.Channels, c.Subscribers = loadgen.Channels, o.channelPublishers, o.channels, o.channels*o.perChannel
	all[channels] = spec{channels, fmt.Sprintf("%d channels x %d subscribers, %d publishers", o.channels, o.perChannel, o.channelPublishers), c, oneNode}
	c = base
	c.Scenario, c.Subscribers = loadgen.Idle, o.idle
	all[idle] = spec{idle, fmt.Sprintf("%d subscribed connections held (and the ramp to them)", o.idle), c, oneNode}
	for name, sp := range clusterPlan(all) {
		all[name] = sp
	}

	names := scenarioNames
	if o.only != "" {
		names = nil
		for n := range strings.SplitSeq(o.only, ",") {
			if n = strings.TrimSpace(n); n == "cluster" {
				names = append(names, clusterNames...)
			} else {
				names = append(names, n)
			}
		}
	}
	var specs []spec
	for _, n := range names {
		sp, ok := all[n]
		if !ok {
			return nil, fmt.Errorf("unknown scenario %q (want %s, or cluster for %s)", n,
				strings.Join(scenarioNames, ","), strings.Join(clusterNames, ","))
		}
		if _, err := sp.cfg.WithDefaults(); err != nil {
			return nil, err
		}
		specs = append(specs, sp)
	}
	return specs, nil
}

// clusterPlan derives the two-node and durable scenarios from the
// single-node ones: the same load, deployed otherwise.
func clusterPlan(all map[string]spec) map[string]spec {
	two := func(from, title string) spec {
		sp := all[from]
		return spec{title: sp.title + ", " + title, cfg: sp.cfg, topo: twoNodes}
	}
	out := map[string]spec{
		fanoutCluster:     two(fanoutMax, "2 nodes: publisher on node 1, subscribers split"),
		fanoutClusterRate: two(fanoutRate, "2 nodes: publisher on node 1, subscribers split"),
		channelsCluster:   two(channels, "2 nodes: publishers on node 1, subscribers split"),
	}
	d := all[channels]
	out[channelsDurable] = spec{title: d.title + ", Sluice with --data-dir vs in memory", cfg: d.cfg, topo: durableNode}
	for name, sp := range out {
		sp.name = name
		out[name] = sp
	}
	return out
}

// systemsFor returns the systems a scenario runs on: those asked for,
// but the durable scenario compares a durable Sluice edge with the
// in-memory one (when Sluice is asked for at all).
func systemsFor(sp spec, systems []system) []system {
	if sp.topo != durableNode {
		return systems
	}
	for _, s := range systems {
		if s.name == "sluice" {
			return []system{sluiceAs(durableSystem, durableNode), sluiceAs("sluice", oneNode)}
		}
	}
	return nil
}

// durableSystem names the durable edge in the durable scenario's results.
const durableSystem = "sluice-durable"

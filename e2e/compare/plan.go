package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// The scenarios, in the order of the table.
const (
	fanoutMax  = "fanout-max"
	fanoutRate = "fanout-rate"
	channels   = "channels"
	idle       = "idle"
	// What the apps of Satori's SDKs run (issue 19): Sluice's clients
	// speak JSON, each publisher keeps one acknowledged publish in
	// flight, and the floor runs too.
	fanoutRateJSON = "fanout-rate-json"
	channelsJSON   = "channels-json"
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
var scenarioNames = []string{fanoutMax, fanoutRate, channels, idle, fanoutRateJSON, channelsJSON}

// clusterNames are the scenarios --only cluster stands for.
var clusterNames = []string{fanoutCluster, fanoutClusterRate, channelsCluster, channelsDurable}

// spec is one scenario of the comparison.
type spec struct {
	name  string
	title string
	cfg   loadgen.Config
	topo  topology // how the systems are deployed for it
	// codec is the codec of the Sluice (and floor) clients; "" is
	// --sluice-codec's.
	codec string
	// floor: the scenario is unbatched (each message leaves in writes of
	// its own), and the floor runs it too, so that each system's CPU per
	// delivery is reported as a ratio to the floor's.
	floor bool
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
	all[fanoutMax] = spec{name: fanoutMax, title: fmt.Sprintf("1 publisher at max rate, %d subscribers, %d-byte messages", c.Subscribers, o.size), cfg: c}
	c.Rate = o.fanoutRate
	all[fanoutRate] = spec{name: fanoutRate, title: fmt.Sprintf("1 publisher at %g msgs/s, %d subscribers", o.fanoutRate, c.Subscribers), cfg: c, floor: true}
	c.Inflight = 1
	all[fanoutRateJSON] = spec{name: fanoutRateJSON, title: fmt.Sprintf("1 publisher at %g msgs/s, 1 publish in flight, %d subscribers; Sluice in JSON", o.fanoutRate, c.Subscribers),
		cfg: c, codec: "json", floor: true}
	c = base
	c.Scenario, c.Publishers, c.Channels, c.Subscribers = loadgen.Channels, o.channelPublishers, o.channels, o.channels*o.perChannel
	all[channels] = spec{name: channels, title: fmt.Sprintf("%d channels x %d subscribers, %d publishers", o.channels, o.perChannel, o.channelPublishers), cfg: c}
	c.Inflight = 1
	all[channelsJSON] = spec{name: channelsJSON, title: fmt.Sprintf("%d channels x %d subscribers, %d publishers with 1 publish in flight each; Sluice in JSON", o.channels, o.perChannel, o.channelPublishers),
		cfg: c, codec: "json", floor: true}
	c = base
	c.Scenario, c.Subscribers = loadgen.Idle, o.idle
	all[idle] = spec{name: idle, title: fmt.Sprintf("%d subscribed connections held (and the ramp to them)", o.idle), cfg: c}
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
		return spec{title: sp.title + ", " + title, cfg: sp.cfg, topo: twoNodes, codec: sp.codec}
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
// and the floor after them for the scenarios it runs (unless --floor=false),
// but the durable scenario compares a durable Sluice edge with the
// in-memory one (when Sluice is asked for at all).
func systemsFor(o *options, sp spec, systems []system) []system {
	if sp.topo != durableNode {
		if sp.floor && o.floor {
			return append(slices.Clip(systems), floorSystem())
		}
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

package main

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/wasm/loadgen"
)

// The scenarios, in the order of the table.
const (
	fanoutMax  = "fanout-max"
	fanoutRate = "fanout-rate"
	channels   = "channels"
	idle       = "idle"
)

var scenarioNames = []string{fanoutMax, fanoutRate, channels, idle}

// spec is one scenario of the comparison.
type spec struct {
	name  string
	title string
	cfg   loadgen.Config
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
	all[fanoutMax] = spec{fanoutMax, fmt.Sprintf("1 publisher at max rate, %d subscribers, %d-byte messages", c.Subscribers, o.size), c}
	c.Rate = o.fanoutRate
	all[fanoutRate] = spec{fanoutRate, fmt.Sprintf("1 publisher at %g msgs/s, %d subscribers", o.fanoutRate, c.Subscribers), c}
	c = base
	c.Scenario, c.Publishers, c.Channels, c.Subscribers = loadgen.Channels, o.channelPublishers, o.channels, o.channels*o.perChannel
	all[channels] = spec{channels, fmt.Sprintf("%d channels x %d subscribers, %d publishers", o.channels, o.perChannel, o.channelPublishers), c}
	c = base
	c.Scenario, c.Subscribers = loadgen.Idle, o.idle
	all[idle] = spec{idle, fmt.Sprintf("%d subscribed connections held (and the ramp to them)", o.idle), c}

	names := scenarioNames
	if o.only != "" {
		names = strings.Split(o.only, ",")
	}
	var specs []spec
	for _, n := range names {
		sp, ok := all[strings.TrimSpace(n)]
		if !ok {
			return nil, fmt.Errorf("unknown scenario %q (want %s)", n, strings.Join(scenarioNames, ","))
		}
		if _, err := sp.cfg.WithDefaults(); err != nil {
			return nil, err
		}
		specs = append(specs, sp)
	}
	return specs, nil
}

package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// group is one deployment of a system under test: its server processes
// (node 1, the publishers', first), what they need (Redis), and the data
// directories they write. The run that started it stops it.
type group struct {
	servers []*process
	deps    []*process // stopped after the servers, which use them
	dirs    []string   // removed once everything is stopped
	admin   string     // base URL of node 1's pprof handler, "" for none
}

// single is the group of one server process.
func single(p *process) *group { return &group{servers: []*process{p}} }

// stop stops the servers together (a JetStream node stopping alone would
// wait for a quorum that is stopping too), then their dependencies, then
// removes the data directories. It is safe on a partly started group.
func (g *group) stop() {
	var wg sync.WaitGroup
	for _, p := range g.servers {
		wg.Go(p.stop)
	}
	wg.Wait()
	for _, p := range g.deps {
		p.stop()
	}
	for _, d := range g.dirs {
		_ = os.RemoveAll(d)
	}
}

// exited returns, if a process of the group has exited, why, with its
// output's tail; nil while all run.
func (g *group) exited() error {
	for _, p := range append(append([]*process(nil), g.servers...), g.deps...) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited: %v\n%s", p.cmd.Path, p.err, p.out)
		default:
		}
	}
	return nil
}

// probe samples the whole group: one process as before, or the sum of
// the servers and their dependencies, since Redis does part of
// Centrifugo's work as the embedded NATS does part of Sluice's.
func (g *group) probe() loadgen.Probe {
	all := append(append([]*process(nil), g.servers...), g.deps...)
	if len(all) == 1 {
		return loadgen.ProcProbe{PID: all[0].pid()}
	}
	pr := make(sumProbe, len(all))
	for i, p := range all {
		pr[i] = loadgen.ProcProbe{PID: p.pid()}
	}
	return pr
}

// sumProbe adds up the memory and CPU time of several processes.
type sumProbe []loadgen.ProcProbe

// Sample implements loadgen.Probe.
func (s sumProbe) Sample(ctx context.Context) (loadgen.Sample, error) {
	var sum loadgen.Sample
	for _, p := range s {
		v, err := p.Sample(ctx)
		if err != nil {
			return loadgen.Sample{}, err
		}
		sum.RSS += v.RSS
		sum.CPU += v.CPU
	}
	return sum, nil
}

// Source implements loadgen.Probe.
func (s sumProbe) Source() string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = p.Source()
	}
	return strings.Join(parts, "+")
}

// startAll spawns the processes of a cluster at once, then waits until
// each is ready: a JetStream node is ready only once its peers are up.
// On failure it stops what it started.
func startAll(ctx context.Context, g *group, starts []func() (*process, readiness, error)) error {
	ready := make([]readiness, len(starts))
	for i, start := range starts {
		p, r, err := start()
		if err != nil {
			g.stop()
			return err
		}
		g.servers = append(g.servers, p)
		ready[i] = r
	}
	for i, p := range g.servers {
		if err := p.waitReady(ctx, ready[i]); err != nil {
			g.stop()
			return fmt.Errorf("node %d of %d: %w\n%s", i+1, len(g.servers), err, p.out)
		}
	}
	return nil
}

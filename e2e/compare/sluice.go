package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
	"github.com/sluicehq/sluice/wasm/client"
)

// sluiceLimits are the limits every benchmarked edge runs with: raised so
// that the load generator's one address and its rate are not refused.
const sluiceLimits = "limits:\n  requests_per_second: 1000000\n  connections: 100000\n  connections_per_ip: -1\nlog:\n  level: warn\n"

// sluiceSystem runs `sluice edge` with limits raised for benchmarking: one
// edge in memory, one durable edge, or a cluster of two.
func sluiceSystem() system {
	return system{name: "sluice", start: func(ctx context.Context, o *options, topo topology) (*group, loadgen.Driver, error) {
		switch topo {
		case twoNodes:
			return startSluiceCluster(ctx, o)
		case durableNode:
			return startSluiceEdge(ctx, o, true)
		default:
			return startSluiceEdge(ctx, o, false)
		}
	}}
}

// sluiceAs is sluiceSystem under another name, always in one topology:
// the durable scenario compares two Sluice deployments with each other.
func sluiceAs(name string, topo topology) system {
	s := sluiceSystem()
	start := s.start
	s.name = name
	s.start = func(ctx context.Context, o *options, _ topology) (*group, loadgen.Driver, error) {
		g, d, err := start(ctx, o, topo)
		if rtm, ok := d.(*loadgen.RTM); ok {
			rtm.Label = name // so the scenario's two runs tell apart
		}
		return g, d, err
	}
	return s
}

// startSluiceEdge runs one edge, in memory or with a data directory.
func startSluiceEdge(ctx context.Context, o *options, durable bool) (*group, loadgen.Driver, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	cfg := fmt.Sprintf("listen: %s\n%s", addr, sluiceLimits)
	admin, cfg, err := withAdmin(o, cfg)
	if err != nil {
		return nil, nil, err
	}
	g := &group{}
	// The in-memory edge is checked as it always was; a durable one is
	// ready once it has opened its stream.
	health := "http://" + addr + "/healthz"
	if durable {
		dir, err := os.MkdirTemp(o.workDir, "data-")
		if err != nil {
			return nil, nil, err
		}
		g.dirs = append(g.dirs, dir)
		cfg += fmt.Sprintf("cluster:\n  data_dir: %s\n", dir)
		if o.durableSync != "" {
			// An interval measures what the edge does per message
			// apart from the fsync that always waits for.
			cfg += fmt.Sprintf("  sync: %s\n", o.durableSync)
		}
		health = "http://" + addr + "/readyz"
	}
	path := filepath.Join(o.workDir, "sluice.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		g.stop()
		return nil, nil, err
	}
	p, err := startProcess(ctx, o.sluiceBin, o.workDir, health, "edge", "--config", path)
	if err != nil {
		g.stop()
		return nil, nil, err
	}
	g.servers = []*process{p}
	g.admin = admin
	return g, sluiceDriver(o, "ws://"+addr), nil
}

// withAdmin adds the admin listener (pprof) to an edge's configuration
// when profiles are asked for; admin is its base URL, or "".
func withAdmin(o *options, cfg string) (admin, out string, err error) {
	if o.profileDir == "" {
		return "", cfg, nil
	}
	addr, err := freeAddr()
	if err != nil {
		return "", "", err
	}
	return "http://" + addr, cfg + fmt.Sprintf("admin:\n  listen: %s\n", addr), nil
}

// sluiceDriver reaches the edges at urls: the publishers the first, the
// subscribers all of them in turn.
func sluiceDriver(o *options, urls ...string) *loadgen.RTM {
	return &loadgen.RTM{Label: "sluice", URL: urls[0], MoreURLs: urls[1:], Options: client.Options{
		AppKey: "demo", Codec: o.sluiceCodec, Logger: quietLogger(),
	}}
}

// clusterNodes is the size of the cluster scenarios' deployments.
const clusterNodes = 2

// startSluiceCluster runs two edges whose embedded NATS nodes form one
// JetStream cluster, the stream replicated o.replicas times (2 by
// default: a two-node cluster's meta group needs both nodes for a quorum
// anyway, so one replica would buy no availability, and two make every
// acknowledgment mean "stored on both", as a cluster promises).
func startSluiceCluster(ctx context.Context, o *options) (*group, loadgen.Driver, error) {
	type node struct{ addr, route, dir string }
	nodes := make([]node, clusterNodes)
	g := &group{}
	for i := range nodes {
		addr, err1 := freeAddr()
		route, err2 := freeAddr()
		dir, err3 := os.MkdirTemp(o.workDir, "data-")
		if err3 == nil {
			g.dirs = append(g.dirs, dir)
		}
		if err := firstErr(err1, err2, err3); err != nil {
			g.stop()
			return nil, nil, err
		}
		nodes[i] = node{addr, route, dir}
	}
	routes := make([]string, len(nodes))
	for i, n := range nodes {
		routes[i] = "nats-route://" + n.route
	}
	starts := make([]func() (*process, readiness, error), len(nodes))
	for i, n := range nodes {
		cfg := fmt.Sprintf("listen: %s\n%scluster:\n  data_dir: %s\n  name: compare\n  listen: %s\n  node_name: n%d\n  replicas: %d\n  routes:\n    - %s\n",
			n.addr, sluiceLimits, n.dir, n.route, i+1, o.replicas, strings.Join(routes, "\n    - "))
		if i == 0 {
			admin, withA, err := withAdmin(o, cfg)
			if err != nil {
				g.stop()
				return nil, nil, err
			}
			cfg, g.admin = withA, admin
		}
		path := filepath.Join(o.workDir, fmt.Sprintf("sluice-n%d.yaml", i+1))
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			g.stop()
			return nil, nil, err
		}
		starts[i] = func() (*process, readiness, error) {
			p, err := spawn(o.sluiceBin, o.workDir, "edge", "--config", path)
			return p, httpReady("http://" + n.addr + "/readyz"), err
		}
	}
	if err := startAll(ctx, g, starts); err != nil {
		return nil, nil, fmt.Errorf("sluice cluster: %w", err)
	}
	urls := make([]string, len(nodes))
	for i, n := range nodes {
		urls[i] = "ws://" + n.addr
	}
	return g, sluiceDriver(o, urls...), nil
}

// firstErr is the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// Centrifugo's history in the cluster scenarios, to keep about what a
// Sluice edge keeps by default (every message for 60s, and the newest
// for 6h): the last centrifugoHistorySize messages of a channel, for
// centrifugoHistoryTTL. Centrifugo bounds a channel's history by count
// and expires it whole, so it cannot keep "all of the last minute";
// this is a few thousand, as its docs suggest for a stream.
const (
	centrifugoHistorySize = 5000
	centrifugoHistoryTTL  = "60s"
)

// redisApt is how to install Redis where it is missing.
const redisApt = "apt-get install -y redis-server"

// errNoRedis reports that the cluster scenarios cannot run Centrifugo.
var errNoRedis = errors.New("compare: redis-server not found")

// centrifugoSystem runs Centrifugo with anonymous publish and subscribe
// on every channel and no usage statistics: alone on its memory engine
// and no history (its fastest setting), or as two nodes on one Redis
// with history on.
func centrifugoSystem() system {
	return system{name: "centrifugo", start: func(ctx context.Context, o *options, topo topology) (*group, loadgen.Driver, error) {
		if topo == twoNodes {
			return startCentrifugoCluster(ctx, o)
		}
		addr, err := freeAddr()
		if err != nil {
			return nil, nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		cfg := centrifugoConfig(host, port, `{"type": "memory"}`, "")
		path := filepath.Join(o.workDir, "centrifugo.json")
		if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
			return nil, nil, err
		}
		p, err := startProcess(ctx, o.centrifugoBin, o.workDir, "http://"+addr+"/health", "--config", path)
		if err != nil {
			return nil, nil, err
		}
		return single(p), &centrifugoDriver{urls: []string{centrifugoURL(addr)}, json: o.centrifugoJSON}, nil
	}}
}

func centrifugoURL(addr string) string { return "ws://" + addr + "/connection/websocket" }

// startCentrifugoCluster runs a Redis and two Centrifugo nodes on it.
func startCentrifugoCluster(ctx context.Context, o *options) (*group, loadgen.Driver, error) {
	g := &group{}
	redis, redisAddr, err := startRedis(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	g.deps = []*process{redis}
	engine := `{"type": "redis", "redis": {"address": ["redis://` + redisAddr + `"]}}`
	history := fmt.Sprintf(`,
      "history_size": %d,
      "history_ttl": %q`, centrifugoHistorySize, centrifugoHistoryTTL)
	urls := make([]string, clusterNodes)
	starts := make([]func() (*process, readiness, error), clusterNodes)
	for i := range starts {
		addr, err := freeAddr()
		if err != nil {
			g.stop()
			return nil, nil, err
		}
		host, port, _ := net.SplitHostPort(addr)
		path := filepath.Join(o.workDir, fmt.Sprintf("centrifugo-n%d.json", i+1))
		if err := os.WriteFile(path, []byte(centrifugoConfig(host, port, engine, history)), 0o600); err != nil {
			g.stop()
			return nil, nil, err
		}
		urls[i] = centrifugoURL(addr)
		starts[i] = func() (*process, readiness, error) {
			p, err := spawn(o.centrifugoBin, o.workDir, "--config", path)
			return p, httpReady("http://" + addr + "/health"), err
		}
	}
	if err := startAll(ctx, g, starts); err != nil {
		return nil, nil, fmt.Errorf("centrifugo cluster: %w", err)
	}
	return g, &centrifugoDriver{urls: urls, json: o.centrifugoJSON}, nil
}

// centrifugoConfig is Centrifugo v6's configuration for the comparison:
// keys from its internal/configtypes (engine.*, client.*,
// channel.without_namespace.*, the namespace the benchmark's channels
// fall in). engine is the engine object; history is "" or more keys of
// the namespace, starting with a comma.
func centrifugoConfig(host, port, engine, history string) string {
	return `{
  "http_server": {"address": "` + host + `", "port": ` + port + `},
  "log": {"level": "warn"},
  "engine": ` + engine + `,
  "usage_stats": {"disabled": true},
  "health": {"enabled": true},
  "http_api": {"key": "compare-` + strconv.Itoa(os.Getpid()) + `"},
  "client": {
    "allow_anonymous_connect_without_token": true,
    "allowed_origins": ["*"]
  },
  "channel": {
    "without_namespace": {
      "allow_subscribe_for_anonymous": true,
      "allow_subscribe_for_client": true,
      "allow_publish_for_anonymous": true,
      "allow_publish_for_client": true` + history + `
    }
  }
}
`
}

// checkRedis reports, before anything runs, a missing redis-server and
// how to install it.
func checkRedis(bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%w at %s: the cluster scenarios run Centrifugo on Redis; install it with `%s` (as root), or pass --redis-bin: %w",
			errNoRedis, bin, redisApt, err)
	}
	return nil
}

// startRedis runs redis-server on a free loopback port with nothing
// written to disk (no snapshots, no append-only file), so every run
// starts empty, and waits until it answers PING.
func startRedis(ctx context.Context, o *options) (*process, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	host, port, _ := net.SplitHostPort(addr)
	p, err := spawn(o.redisBin, o.workDir, "--bind", host, "--port", port,
		"--save", "", "--appendonly", "no", "--dir", o.workDir, "--loglevel", "warning")
	if err != nil {
		return nil, "", err
	}
	if err := p.waitReady(ctx, redisReady(addr)); err != nil {
		p.stop()
		return nil, "", fmt.Errorf("redis-server: %w\n%s", err, p.out)
	}
	return p, addr, nil
}

// redisReady checks that Redis at addr answers PING.
func redisReady(addr string) readiness {
	return readiness{"redis://" + addr, func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, "+PONG") {
			return fmt.Errorf("PING answered %q", strings.TrimSpace(line))
		}
		return nil
	}}
}

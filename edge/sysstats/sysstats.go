// Package sysstats publishes the edge's own numbers on the $sys.stats
// channel of every app it serves, once a second: open connections,
// messages in and out per second, live channels, store memory. The demo
// dashboard draws them; any client whose role may subscribe to
// "$sys.stats" can read them the same way, with history to start from the
// last minutes.
//
// The numbers are the edge's (server.Stats and store.Stats), not one
// app's: an operator who does not want apps to see them grants no role
// subscribe on "$sys.stats".
package sysstats

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
)

// Channel is where the statistics are published in each app.
const Channel = app.StatsChannel

// DefaultInterval is how often the statistics are published.
const DefaultInterval = time.Second

// Options configure a Publisher; nil or zero fields mean the defaults.
type Options struct {
	// Edge names this edge in its messages (their "edge"): the edges of
	// a cluster publish on one channel, and a reader tells their
	// samples apart by it. Default: the host's name.
	Edge string
	// Interval between two publications; default DefaultInterval.
	Interval time.Duration
	// Logger receives failures to publish (at debug level: they happen
	// while the edge shuts down); default slog.Default().
	Logger *slog.Logger
}

// Publisher publishes the statistics until Stop or its context ends.
type Publisher struct {
	src      *server.Server
	edge     string
	interval time.Duration
	log      *slog.Logger
	cancel   context.CancelFunc
	done     chan struct{}
	stopOnce sync.Once
}

// Start publishes a first sample at once, then one per interval, on a
// goroutine that ends when ctx ends or Stop is called.
func Start(ctx context.Context, srv *server.Server, opts *Options) *Publisher {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Edge == "" {
		o.Edge, _ = os.Hostname()
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Publisher{src: srv, edge: o.Edge, interval: o.Interval, log: o.Logger, cancel: cancel, done: make(chan struct{})}
	go p.run(ctx)
	return p
}

// Stop ends the publisher and waits for its goroutine. It is idempotent.
func (p *Publisher) Stop() {
	p.stopOnce.Do(p.cancel)
	<-p.done
}

// run publishes until ctx ends.
func (p *Publisher) run(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	prev := p.sample(time.Now())
	p.publish(Message(prev, prev))
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cur := p.sample(now)
			p.publish(Message(prev, cur))
			prev = cur
		}
	}
}

// sample reads the counters.
func (p *Publisher) sample(now time.Time) Sample {
	return Sample{Edge: p.edge, Time: now, Server: p.src.Stats(), Store: p.src.Store().Stats()}
}

// publish sends one message to every app, unless the edge is shutting
// down (its store closes then).
func (p *Publisher) publish(msg map[string]any) {
	if p.src.Draining() {
		return
	}
	for _, key := range p.src.AppKeys() {
		if _, err := p.src.Publish(key, Channel, msg); err != nil {
			p.log.Debug("sysstats: publish failed", "appkey", key, "err", err)
		}
	}
}

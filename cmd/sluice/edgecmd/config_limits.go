package edgecmd

import (
	"fmt"
	"time"
)

// Defaults of the drain on SIGTERM (LimitsConfig).
const (
	defaultShutdownTimeout = 10 * time.Second
	defaultDrainDelay      = 5 * time.Second
	defaultDrainSpread     = 5 * time.Second
)

// LimitsConfig bounds what clients, and the edge as a whole, may use.
type LimitsConfig struct {
	// Connections is the most simultaneous WebSocket connections; past it,
	// upgrades get HTTP 503. Default: the process's open-files limit less
	// a tenth of it or 256, whichever is more, at most 100000; so that the
	// edge answers 503 while it still has descriptors for HTTP, its
	// listeners and its files (see defaultConnections).
	Connections int `yaml:"connections,omitempty"`
	// ConnectionsPerIP is the most open connections, HTTP or WebSocket,
	// from one source address; past it, requests get HTTP 429 with a JSON
	// body and the connection is closed. Behind a reverse proxy every
	// client has the proxy's address: raise it there. -1 turns it off.
	// Default 1000.
	ConnectionsPerIP int `yaml:"connections_per_ip,omitempty"`
	// IdleTimeout closes an HTTP connection that has no request in flight
	// for that long (a keep-alive never upgraded, or a connection that
	// sends nothing); it also bounds reading a request (headers within the
	// lesser of it and 10s, the whole request within the lesser of it and
	// 30s). Upgraded WebSocket connections are not subject to it; pings
	// watch them. Default 60s.
	IdleTimeout Duration `yaml:"idle_timeout,omitempty"`
	// SubscriptionsPerConnection; past it, subscribe fails with
	// subscription_quota_exceeded. Default 256.
	SubscriptionsPerConnection int `yaml:"subscriptions_per_connection,omitempty"`
	// PrefixChannels is the most channels one prefix subscription
	// (rtm/subscribe with prefix: true) covers; past it, the subscription
	// ends with subscription_quota_exceeded. Default 4096.
	PrefixChannels int `yaml:"prefix_channels,omitempty"`
	// RequestsPerSecond per connection, on average: a token bucket
	// refilling at this rate, of RequestBurst tokens. Past it, requests
	// with an id fail with too_many_requests (the connection stays open);
	// those without (fire-and-forget publishes) are read more slowly
	// instead. Default 1000.
	RequestsPerSecond int `yaml:"requests_per_second,omitempty"`
	// RequestBurst is how many requests a connection may send at once
	// after a quiet spell (the bucket's size): a page subscribing to its
	// channels as it loads, a client resubscribing after a reconnect.
	// Default twice requests_per_second.
	RequestBurst int `yaml:"request_burst,omitempty"`
	// APIRequestsPerSecond bounds each app's server API requests (POST
	// /api/<method>), on average: a token bucket per app over all its
	// keys; past it, requests get 429 too_many_requests with
	// Retry-After. Default 0: no limit (a backend holds the app's key).
	APIRequestsPerSecond int `yaml:"api_requests_per_second,omitempty"`
	// APIRequestBurst is that bucket's size. Default twice
	// api_requests_per_second.
	APIRequestBurst int `yaml:"api_request_burst,omitempty"`
	// AuthFailuresPerConnection: the last failed authentication a
	// connection may make is answered, then the connection is closed
	// (1008). Default 5.
	AuthFailuresPerConnection int `yaml:"auth_failures_per_connection,omitempty"`
	// AuthFailuresPerMinute bounds the failed authentications from one
	// source address; past it, authentications are refused with
	// too_many_requests without their credentials being checked. Behind
	// a reverse proxy every client has the proxy's address. Default 30.
	AuthFailuresPerMinute int `yaml:"auth_failures_per_minute,omitempty"`
	// QueueBytes bounds a connection's replies waiting to be written; a
	// connection that overflows it is closed (1013). Default 1MiB.
	QueueBytes Size `yaml:"queue_bytes,omitempty"`
	// StoreBytes bounds the memory of all channels, their messages and
	// (by an estimate of about half a KiB each) the channels themselves;
	// past it the oldest blocks are evicted, and channels left without
	// messages or subscribers are forgotten. Default 1GiB, or
	// DurableStoreBytes on a durable edge, whose store is a cache of its
	// log.
	StoreBytes Size `yaml:"store_bytes,omitempty"`
	// ChannelBytes bounds the memory of one channel; past it its oldest
	// blocks are evicted. Default 64MiB.
	ChannelBytes Size `yaml:"channel_bytes,omitempty"`
	// Memory is the edge's soft memory limit (the Go runtime's, as
	// GOMEMLIMIT sets it): nearing it, the garbage collector runs more
	// often rather than let the heap grow to twice what is live. Set it
	// below the machine's or container's memory, with room for the
	// kernel's socket buffers. Default: GOMEMLIMIT when set; else 90% of
	// the memory limit of the cgroup the edge runs in (a container's);
	// else none.
	Memory Size `yaml:"memory,omitempty"`
	// WriteTimeout bounds one WebSocket write; a client that does not read
	// for that long is closed (1008). Default 10s.
	WriteTimeout Duration `yaml:"write_timeout,omitempty"`
	// FrameTimeout bounds how long a frame's payload may take to arrive
	// after its header; a client that stalls mid-frame is closed (1008).
	// Default 30s.
	FrameTimeout Duration `yaml:"frame_timeout,omitempty"`
	// PingInterval is how often idle connections are pinged; one that does
	// not answer within another interval is closed. Default 30s.
	PingInterval Duration `yaml:"ping_interval,omitempty"`
	// ShutdownTimeout bounds the closing of the connections on stop, from
	// its start (after DrainDelay); what is still open then is dropped.
	// The edge so exits within drain_delay + shutdown_timeout of a
	// SIGTERM: a service manager's stop timeout must be longer. Default
	// 10s.
	ShutdownTimeout Duration `yaml:"shutdown_timeout,omitempty"`
	// DrainDelay: on SIGTERM, how long /readyz answers 503 "draining"
	// while the edge serves on, new connections included, before it
	// closes any, so that a load balancer sees it and stops sending
	// clients: at least its health checks' interval times their
	// unhealthy threshold. SIGINT (a terminal's Ctrl-C) skips it, and a
	// second signal ends it. Default 5s; 0s for none.
	DrainDelay *Duration `yaml:"drain_delay,omitempty"`
	// DrainSpread: then, on SIGTERM, the window over which the open
	// connections are closed (1001 going away), evenly, so that their
	// reconnects reach the other edges over that time instead of in one
	// storm. It must be shorter than shutdown_timeout. SIGINT closes
	// them at once, and so does another signal during the spread.
	// Default the lesser of 5s and half of shutdown_timeout; 0s for none.
	DrainSpread *Duration `yaml:"drain_spread,omitempty"`
}

// StoreConfig tunes the in-memory channel store.
type StoreConfig struct {
	// BlockBytes is the capacity of a full-size storage block; a larger
	// message gets a block of its own size. Default 64KiB.
	BlockBytes Size `yaml:"block_bytes,omitempty"`
	// FirstBlockBytes is the capacity of a channel's first block; each
	// next one doubles up to BlockBytes, so quiet channels stay small.
	// Default 1KiB.
	FirstBlockBytes Size `yaml:"first_block_bytes,omitempty"`
	// SweepInterval is how often expired blocks are deleted. Default 1s.
	SweepInterval Duration `yaml:"sweep_interval,omitempty"`
}

// LogConfig configures logging.
type LogConfig struct {
	// Level is debug, info, warn or error. Default info; the --log-level
	// flag overrides it.
	Level string `yaml:"level,omitempty"`
	// Format is text or json. Default text; the --log-format flag
	// overrides it.
	Format string `yaml:"format,omitempty"`
}

// shutdownTimeout is ShutdownTimeout or its default.
func (l LimitsConfig) shutdownTimeout() time.Duration {
	if l.ShutdownTimeout > 0 {
		return time.Duration(l.ShutdownTimeout)
	}
	return defaultShutdownTimeout
}

// drainDelay is DrainDelay or its default.
func (l LimitsConfig) drainDelay() time.Duration {
	if l.DrainDelay != nil {
		return time.Duration(*l.DrainDelay)
	}
	return defaultDrainDelay
}

// drainSpread is DrainSpread or its default.
func (l LimitsConfig) drainSpread() time.Duration {
	if l.DrainSpread != nil {
		return time.Duration(*l.DrainSpread)
	}
	return min(defaultDrainSpread, l.shutdownTimeout()/2)
}

// checkDrain refuses a spread that the shutdown timeout would cut.
func (l LimitsConfig) checkDrain() error {
	if s, g := l.drainSpread(), l.shutdownTimeout(); s >= g {
		return fmt.Errorf("limits.drain_spread: %s is not shorter than limits.shutdown_timeout (%s), which bounds the closing", s, g)
	}
	return nil
}

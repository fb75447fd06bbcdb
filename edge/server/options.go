package server

import (
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/store"
)

// Options configure a Server. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// Apps served, by appkey. Required: a server without apps refuses
	// every connection.
	Apps []*app.App
	// Store holds the channels. Nil: the server creates one with
	// StoreOptions and closes it on Shutdown.
	Store *store.Store
	// StoreOptions configure the store the server creates when Store is
	// nil; the server sets Retention from the apps' channel rules and
	// Group to StoreGroup (which a Store given above should use too, or
	// every app's channels count against each app's limit together).
	StoreOptions *store.Options
	// Journals, when set, are the log of record (a durable edge, or a
	// cluster), one per partition in partition order (one: a log of one
	// partition): publishes are acknowledged once they stored them, the
	// store is their replica (with their epochs; the caller feeds it from
	// the journals), and history the store lacks is read from them. With
	// Store set, that store must be a replica with the journals'
	// partitions (chanlog.StorePartitions). Default none: the store is
	// the only copy, in memory.
	Journals []chanlog.Journal
	// Limits bound what one client may do.
	Limits Limits
	// AllowedOrigins lists the Origin hosts (patterns as in
	// websocket.AcceptOptions.OriginPatterns) allowed to open WebSockets
	// from a browser, against cross-site WebSocket hijacking. Default
	// ["*"]: any origin (the edge authenticates by appkey and role, not by
	// cookie). Requests without Origin (non-browser SDKs) are always allowed.
	AllowedOrigins []string
	// Logger receives structured logs; default slog.Default().
	Logger *slog.Logger
	// FirstDelivery, when set, observes for every message the seconds from
	// its being stored to its first delivery to any subscriber (the write
	// of the first rtm/subscription/data carrying it). A
	// prometheus.Histogram fits. Default none.
	FirstDelivery Observer
	// Presence holds who is in each channel. Default: a registry of this
	// edge's connections alone; a cluster gives one that other edges'
	// members are fed into too.
	Presence *presence.Registry
}

// Observer receives measurements, as a Prometheus histogram does.
type Observer interface{ Observe(float64) }

// Limits bound one client's use of the edge.
type Limits struct {
	// Connections is the most simultaneous WebSocket connections; default
	// 100,000. Past it, new upgrades get HTTP 503.
	Connections int
	// SubscriptionsPerConnection; default 256
	// (subscription_quota_exceeded past it).
	SubscriptionsPerConnection int
	// PrefixChannels is the most channels one prefix subscription covers
	// (each holds a cursor); default 4,096. Past it, the subscription ends
	// (or is refused) with subscription_quota_exceeded.
	PrefixChannels int
	// RequestsPerSecond per connection, on average: a token bucket that
	// refills at this rate; default 1,000. Past it a request with an id
	// gets too_many_requests (the connection stays open), one without is
	// read once a token is there.
	RequestsPerSecond int
	// RequestBurst is the bucket's size: how many requests a connection
	// may make at once after a quiet spell; default twice
	// RequestsPerSecond.
	RequestBurst int
	// AuthFailures is how many failed authentications a connection may
	// make: the last is answered, then the connection is closed with 1008
	// "too many failed authentications on this connection"; default 5.
	AuthFailures int
	// AuthFailuresPerMinute bounds the failed authentications from one
	// source address, over all its connections (a token bucket with a
	// burst of the same size, taken from by failures only); past it,
	// auth/authenticate is refused with too_many_requests without its
	// credentials being checked, and counts as a failure of its
	// connection. Behind a reverse proxy every client has the proxy's
	// address. Default 30.
	AuthFailuresPerMinute int
	// QueueBytes bounds a connection's queue of replies waiting to be
	// written; default 1 MiB. A connection that lets it overflow is closed
	// with 1013 "try again later".
	QueueBytes int
	// WriteTimeout bounds one WebSocket write; a client that does not read
	// for that long is closed with 1008; default 10s.
	WriteTimeout time.Duration
	// FrameTimeout bounds how long a frame's payload may take to arrive
	// after its header; a client that stalls mid-frame is closed with
	// 1008. Default 30s (websocket.DefaultFrameTimeout).
	FrameTimeout time.Duration
	// PingInterval is how often an idle connection is pinged; a connection
	// that does not answer within another interval is closed; default 30s.
	PingInterval time.Duration
	// ShutdownTimeout bounds a graceful shutdown; default 10s.
	ShutdownTimeout time.Duration
	// DrainSpread is the window over which Shutdown closes the open
	// connections, evenly, so that their reconnects reach the other edges
	// over that time rather than at once; default 0: all at once.
	DrainSpread time.Duration
}

// Package session serves one client connection of the edge: its reader
// goroutine reads each frame, checks the rate limit, decodes the request
// in the codec the client chose, authenticates (auth/handshake,
// auth/authenticate: role_secret or a JWT), checks the role's
// permissions and the app's hooks, and serves it (publish, write,
// delete, read, subscribe, unsubscribe, presence), then queues its reply
// in the connection's outbox. The delivery engine (edge/delivery) sends
// the outbox and every subscription's data; a session is the Owner of
// its delivery side (delivery.Conn, embedded in Session).
//
// The reader handles requests one at a time, so replies leave in request
// order; the replies of publishes the channel log answers later (a
// durable or clustered edge) are put back in that order (acks.go).
//
// Lock order: grantTimer.mu (grant.go) before membership.Presence.mu
// (edge/membership) before the presence registry's shard locks before
// delivery.Conn.mu, before hook.Occupancy.mu (edge/hook) before the
// events sender's; acks.mu (acks.go) before delivery.Conn.mu.
package session

import (
	"github.com/sluicehq/sluice/edge/peerlimit"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/deadman"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/tally"
)

// Edge is what every session of an edge shares. Its fields are set once,
// before the first session starts (NewEdge), and never change.
type Edge struct {
	Engine   *delivery.Engine   // sends what the sessions queue and subscribe to
	ChanLog  chanlog.Log        // the channel log: the store, or the journal and its replica
	Store    *store.Store       // the channels; its clock stamps subscriptions
	TTL      *deadman.Switches  // the dead man's switches of publishes with ttl
	Presence *presence.Registry // who is in each channel
	Views    *filter.Shares     // simple views' shared results
	Counters *tally.Counters
	Codecs   *payload.Usage // which codecs a publish encodes
	Limits   Limits
	Logger   *slog.Logger

	authLimit *peerlimit.Failures // failed authentications per source address
}

// NewEdge returns e, with what it makes of its limits.
func NewEdge(e Edge) *Edge {
	e.authLimit = peerlimit.New(e.Limits.AuthFailuresPerMinute, nil)
	return &e
}

// Limits bound what one connection may do; each is the server's limit of
// the same name (edge/server's Limits), with its default applied.
type Limits struct {
	SubscriptionsPerConnection int
	RequestsPerSecond          int
	RequestBurst               int
	AuthFailures               int
	AuthFailuresPerMinute      int // per source address, over all its connections
	QueueBytes                 int
	WriteTimeout               time.Duration
	PingInterval               time.Duration
}

// App is an app as its sessions serve it: its configuration, its
// counters and its hooks. It is read-only once the edge serves.
type App struct {
	*app.App
	Traffic   *tally.App
	Hooks     *hook.Hooks     // nil: the app has none
	Occupancy *hook.Occupancy // nil: the app posts no events
}

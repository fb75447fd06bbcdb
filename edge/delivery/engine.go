// Package delivery is the edge's delivery engine: it sends each
// connection what it has to send, in order, without letting a slow
// client hold up anybody else. A connection's delivery side (Conn) has
// an outbox (the queue of its replies and control items), its live
// subscriptions (each a cursor on a channel of the store, with its
// options: a view, value_changes, a prefix), and a writer, taken on
// demand, that sends the queue and what the cursors read: the
// connection's reader after handling what it read, a fan-out worker when
// the store wakes an idle connection, or a writer goroutine of the
// connection's own when either would block (writerstate.go says who,
// and how it moves). The session that owns a connection (Owner) hands
// its subscriptions over and queues its replies; nothing here knows of
// requests.
//
// The fan-out workers (fanout.go) make the writer passes of idle
// connections; those of a batch share the data frame they would all
// encode alike (shared.go). Prefix subscriptions (prefix.go) follow
// every channel under a prefix, found as the store creates them.
//
// Lock order: Conn.mu, which guards the outbox's queue with the live
// subscriptions, before hook.Occupancy.mu (a subscription's close
// vacates it); prefixIndex.mu before prefixGroup.mu, neither held while
// the store or a Conn's lock is taken. fanWorker.mu is a leaf: Wake
// takes it, holding no lock of the connection's.
package delivery

import (
	"log/slog"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/tally"
)

// Observer receives measurements, as a Prometheus histogram does.
type Observer interface{ Observe(float64) }

// Config configures an Engine.
type Config struct {
	// Store holds the channels the subscriptions read; its clock times
	// first deliveries, and the channels it creates are offered to the
	// prefix subscriptions.
	Store *store.Store
	// ChanLog is the channel log over Store: a prefix subscription asks
	// it to watch its prefix (chanlog.Log.Watch).
	ChanLog  chanlog.Log
	Counters *tally.Counters
	// FirstDelivery, when set, observes for every message the seconds
	// from its being stored to its first delivery to any subscriber.
	FirstDelivery Observer
	Logger        *slog.Logger
	// QueueBytes bounds a connection's queue of replies waiting to be
	// written; past it, the connection is closed with 1013.
	QueueBytes int
	// PrefixChannels is the most channels one prefix subscription covers.
	PrefixChannels int
}

// Engine is an edge's delivery engine: its fan-out workers, its prefix
// subscriptions, and what its connections' writers share.
type Engine struct {
	store     *store.Store
	chlog     chanlog.Log
	fan       *fanout
	prefixes  *prefixIndex
	counters  *tally.Counters
	firstSeen Observer // nil: not measured
	deltas    deltaCache
	log       *slog.Logger
	limits    limits
}

// limits are Config's bounds.
type limits struct {
	queueBytes, prefixChannels int
}

// New returns the engine of cfg's store. It hooks the store's channel
// creation (store.Store.OnCreate) for the prefix subscriptions.
func New(cfg *Config) *Engine {
	e := &Engine{
		store:     cfg.Store,
		chlog:     cfg.ChanLog,
		fan:       newFanout(),
		prefixes:  newPrefixIndex(cfg.Store),
		counters:  cfg.Counters,
		firstSeen: cfg.FirstDelivery,
		log:       cfg.Logger,
		limits:    limits{queueBytes: cfg.QueueBytes, prefixChannels: cfg.PrefixChannels},
	}
	// With a journal the hook runs on the feed's goroutine too, as it
	// brings channels made on other edges (under its applyMu: the hook
	// takes only the prefix locks and the store's).
	cfg.Store.OnCreate(e.prefixes.created)
	return e
}

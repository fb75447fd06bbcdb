// Package server is the edge's front door: it serves the WebSocket
// endpoint /v2 (http.Handler), checks the appkey, the connection limit,
// the origin and the app's connect hook before the upgrade, and hands
// each connection to a session (edge/session) on a goroutine of its own;
// the HTTP handler returns at once, and its goroutine serves the
// connection no further. It makes what the sessions share (the store,
// the channel log, the dead man's switches, the delivery engine of
// edge/delivery, presence), keeps the open connections for a drain and
// Shutdown, counts (Stats), and serves the server API's methods for
// apps' backends (Backend*).
//
// Lock order: connSet.mu (server.go) before a session's locks (see
// edge/session); the delivery engine's fan-out worker locks are leaves.
// So is deadman.Switches.mu (edge/deadman), which the journal's feed
// takes under its own lock to arm a standby: nothing calls the store or
// the journal holding it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/deadman"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/stream"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/shared/websocket"
)

// ErrShutdown is returned by Shutdown when connections were still open at
// its deadline; they were closed forcibly.
var ErrShutdown = errors.New("server: shutdown deadline passed with connections open")

// Server is an RTM v2 edge endpoint. It is an http.Handler serving the
// WebSocket endpoint /v2; the caller owns the listener and the http.Server.
type Server struct {
	apps     map[string]*session.App // by appkey: the app, its counters and its hooks; read-only after New
	edge     *session.Edge           // what every session shares: the store, the channel log, the delivery engine...
	ownStore bool                    // the server made the store: Shutdown closes it
	limits   Limits
	origins  origins // who may open WebSockets from a browser
	ids      connIDs // the connections' ids (hooks.go)
	log      *slog.Logger
	conns    connSet         // the open connections, for Shutdown and the server API
	drain    drainState      // drain.go
	streams  stream.Registry // the open session streams, which POSTs name (stream.go)
	pubRates peerRates       // the request rates of one-shot publishes (stream_pub.go)
	// httpStreams counts the open connections carried over HTTP (of
	// conns.active), httpStreamsTotal those opened: written by
	// openTunnel and the end of such a connection.
	httpStreams      atomic.Int64
	httpStreamsTotal atomic.Uint64
}

// origins are the Origin hosts allowed to open WebSockets from a browser
// (Options.AllowedOrigins); any: every one.
type origins struct {
	patterns []string
	any      bool
}

// connSet is the server's connections: those open, and the state of its
// drain and shutdown.
type connSet struct {
	mu       sync.Mutex                    // guards open, unready, closing and aborting
	open     map[*session.Session]struct{} // open connections, for Shutdown
	unready  bool                          // set once by BeginDrain: not ready, still serving
	closing  bool                          // set once by Shutdown; refuses new connections
	aborting bool                          // set once Shutdown's deadline passed; drops late connections
	wg       sync.WaitGroup                // one per connection attempt admitted by enter
	shutOnce sync.Once
	// active counts open connections; written by accept and a
	// connection's end.
	active atomic.Int64
}

// New returns a Server for the given options.
func New(opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{
		apps:   make(map[string]*session.App, len(opts.Apps)),
		limits: opts.Limits.withDefaults(),
		log:    opts.Logger,
		conns:  connSet{open: make(map[*session.Session]struct{})},
		drain:  drainState{hurry: make(chan struct{})},
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	for _, a := range opts.Apps {
		if err := a.Validate(); err != nil {
			return nil, fmt.Errorf("server: app %q: %w", a.Key, err)
		}
		if _, dup := s.apps[a.Key]; dup {
			return nil, fmt.Errorf("server: appkey %q configured twice", a.Key)
		}
		s.apps[a.Key] = &session.App{App: a, Traffic: &tally.App{}}
	}
	if err := s.startHooks(opts.Apps); err != nil {
		return nil, err
	}
	s.origins.patterns = opts.AllowedOrigins
	if len(s.origins.patterns) == 0 {
		s.origins.patterns = []string{"*"}
	}
	s.origins.any = slices.Contains(s.origins.patterns, "*")
	s.edge = s.newEdge(opts)
	return s, nil
}

// newEdge makes what the sessions share: the store (unless opts gives
// one), the channel log over it, the switches, the delivery engine.
func (s *Server) newEdge(opts *Options) *session.Edge {
	st := opts.Store
	if st == nil {
		so := store.Options{}
		if opts.StoreOptions != nil {
			so = *opts.StoreOptions
		}
		so.Retention = s.retention
		so.Group = StoreGroup
		so.Partitions = chanlog.StorePartitions(opts.Journals)
		st = store.New(&so)
		s.ownStore = true
	}
	reg := opts.Presence
	if reg == nil {
		reg = presence.New()
	}
	counters := &tally.Counters{}
	chlog := chanlog.New(chanlog.JournalConfig{Journals: opts.Journals, Store: st,
		Retention: s.retention, Log: s.log})
	ttl := deadman.New(st, chlog)
	chlog.OnSwitch(ttl.Standby)
	l := s.limits
	return session.NewEdge(session.Edge{
		Engine: delivery.New(&delivery.Config{Store: st, ChanLog: chlog, Counters: counters, FirstDelivery: opts.FirstDelivery,
			Logger: s.log, QueueBytes: l.QueueBytes, PrefixChannels: l.PrefixChannels}),
		ChanLog: chlog, Store: st, TTL: ttl, Presence: reg, Views: &filter.Shares{}, Counters: counters,
		Codecs: payload.NewUsage(st.Now), Logger: s.log,
		Limits: session.Limits{SubscriptionsPerConnection: l.SubscriptionsPerConnection,
			RequestsPerSecond: l.RequestsPerSecond, RequestBurst: l.RequestBurst, AuthFailures: l.AuthFailures,
			AuthFailuresPerMinute: l.AuthFailuresPerMinute, QueueBytes: l.QueueBytes,
			WriteTimeout: l.WriteTimeout, PingInterval: l.PingInterval},
	})
}

// Store returns the store the server appends to.
func (s *Server) Store() *store.Store { return s.edge.Store }

// StoreGroup is the group (store.Options.Group) of a store key: its
// appkey, so that each app's channels are counted apart for its
// max_channels. A store given in Options.Store should group by it.
func StoreGroup(key string) string {
	if i := strings.IndexByte(key, 0); i >= 0 {
		return key[:i]
	}
	return ""
}

// retention looks up an app channel's rule from its store key.
func (s *Server) retention(key string) store.Retention {
	i := strings.IndexByte(key, 0)
	if i < 0 {
		return store.Retention{}
	}
	a, ok := s.apps[key[:i]]
	if !ok {
		return store.Retention{}
	}
	return a.Retention(key[i+1:])
}

// ServeHTTP serves the RTM endpoint at /v2, and its HTTP streaming
// endpoints beside it (stream.go).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v2", "/v2/":
		s.accept(w, r)
	case PathStream:
		s.serveStream(w, r)
	case PathSubscribe:
		s.openSubscribe(w, r)
	case PathPublish:
		s.publishOnce(w, r)
	default:
		http.NotFound(w, r)
	}
}

// goingAway is the close reason of connections ended by Shutdown.
const goingAway = "going away: edge shutting down"

// enter admits a connection attempt unless shutting down. Shutdown waits
// for every attempt admitted, upgraded yet or not; the caller calls
// s.wg.Done when the attempt ends.
func (s *Server) enter() bool {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	if s.conns.closing {
		return false
	}
	s.conns.wg.Add(1)
	return true
}

// track registers an upgraded connection. One whose upgrade raced with
// Shutdown is told to go away at once, or dropped if Shutdown's deadline
// has passed, so that Shutdown never waits for it beyond its deadline.
func (s *Server) track(c *session.Session) {
	s.conns.mu.Lock()
	s.conns.open[c] = struct{}{}
	closing, aborting := s.conns.closing, s.conns.aborting
	s.conns.mu.Unlock()
	switch {
	case aborting:
		c.Abort()
	case closing:
		c.CloseWith(websocket.StatusGoingAway, goingAway)
	}
}

func (s *Server) untrack(c *session.Session) {
	s.conns.mu.Lock()
	delete(s.conns.open, c)
	s.conns.mu.Unlock()
}

// Shutdown stops accepting connections, closes every open one with 1001
// "going away" so clients reconnect elsewhere (spread over
// Limits.DrainSpread, see BeginDrain), and waits for their handlers to
// finish or ctx to end. It closes the store if the server created it. It
// is idempotent; later calls wait the same way.
func (s *Server) Shutdown(ctx context.Context) error {
	s.conns.shutOnce.Do(func() {
		s.conns.mu.Lock()
		s.conns.closing = true
		conns := make([]*session.Session, 0, len(s.conns.open))
		for c := range s.conns.open {
			conns = append(conns, c)
		}
		s.conns.mu.Unlock()
		s.closeSpread(ctx, conns)
	})
	done := make(chan struct{})
	go func() {
		s.conns.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.conns.mu.Lock()
		s.conns.aborting = true
		for c := range s.conns.open {
			c.Abort()
		}
		s.conns.mu.Unlock()
		<-done
		err = ErrShutdown
	}
	// After the connections: none arms a switch any more.
	s.edge.TTL.Close()
	// After the connections, so that their disconnect events are queued.
	s.closeHooks(ctx)
	if s.ownStore {
		s.edge.Store.Close()
	}
	return err
}

// Ready says why the edge cannot serve clients, or returns nil: it is
// draining, or its journal cannot store or has not caught up.
func (s *Server) Ready() error {
	if s.Draining() {
		return errors.New("draining: the edge is shutting down")
	}
	return s.edge.ChanLog.Ready()
}

// Draining reports whether BeginDrain or Shutdown has begun.
func (s *Server) Draining() bool {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	return s.conns.unready || s.conns.closing
}

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.Connections, 100_000)
	def(&l.SubscriptionsPerConnection, 256)
	def(&l.PrefixChannels, 4096)
	def(&l.RequestsPerSecond, 1000)
	def(&l.RequestBurst, 2*l.RequestsPerSecond)
	def(&l.AuthFailures, 5)
	def(&l.AuthFailuresPerMinute, 30)
	def(&l.QueueBytes, 1<<20)
	defDur(&l.WriteTimeout, 10*time.Second)
	defDur(&l.PingInterval, 30*time.Second)
	defDur(&l.ShutdownTimeout, 10*time.Second)
	return l
}

// Package server is the edge's front door: it accepts WebSocket connections
// at /v2, speaks RTM v2 on them in the codec the client chose, checks apps,
// roles and limits, and appends publishes to the channel log; its
// delivery engine (edge/delivery) sends every subscription what it reads
// there.
//
// Each connection has a reader goroutine of its own, which accept starts
// once the connection is upgraded; the HTTP handler returns at once, and
// its goroutine serves the connection no further. The reader handles
// requests one at a time, so replies leave in request order, and queues
// them in the connection's outbox, which the delivery engine's writer
// sends (edge/delivery's outbox.go says who writes, and when).
//
// Lock order: Server.mu before conn.grant.mu (grant.go) before
// membership.Presence.mu (edge/membership) before the presence registry's shard
// locks before delivery.Conn.mu, which guards the outbox's queue with the
// live subscriptions, before hook.Occupancy.mu (edge/hook) before the
// events sender's; conn.acks.mu (acks.go) before delivery.Conn.mu. The
// delivery engine's fan-out worker locks are leaves. So is
// deadman.Switches.mu (edge/deadman), which the journal's feed takes
// under its own lock to arm a standby: nothing calls the store or the
// journal holding it.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/deadman"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/shared/websocket"
)

// ErrShutdown is returned by Shutdown when connections were still open at
// its deadline; they were closed forcibly.
var ErrShutdown = errors.New("server: shutdown deadline passed with connections open")

// Server is an RTM v2 edge endpoint. It is an http.Handler serving the
// WebSocket endpoint /v2; the caller owns the listener and the http.Server.
type Server struct {
	apps      map[string]*app.App
	traffic   map[string]*tally.App // per app, the same keys as apps; read-only after New
	store     *store.Store
	ownStore  bool
	chlog     chanlog.Log       // the channel log: the store, or the journal and its replica
	ttl       *deadman.Switches // the dead man's switches of publishes with ttl
	limits    Limits
	origins   []string
	anyOrigin bool
	log       *slog.Logger
	authLimit *authLimiter
	hk        hookState          // the apps' hooks (hooks.go)
	presence  *presence.Registry // who is in each channel
	views     filter.Shares      // simple views' shared results (edge/filter)
	engine    *delivery.Engine   // the delivery engine: fan-out, prefix subscriptions (edge/delivery)

	// active counts open connections; written by accept and conn close.
	active   atomic.Int64
	counters tally.Counters
	// codecUse is which codecs are in use: a publish encodes its message
	// in those (edge/payload).
	codecUse *payload.Usage

	mu       sync.Mutex         // guards conns, unready, closing and aborting
	conns    map[*conn]struct{} // open connections, for Shutdown
	unready  bool               // set once by BeginDrain: not ready, still serving
	closing  bool               // set once by Shutdown; refuses new connections
	aborting bool               // set once Shutdown's deadline passed; drops late connections
	wg       sync.WaitGroup     // one per connection attempt admitted by enter
	shutOnce sync.Once

	hurry     chan struct{} // closed by Hurry: a drain's spread ends at once
	hurryOnce sync.Once
}

// New returns a Server for the given options.
func New(opts *Options) (*Server, error) {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{
		apps:    make(map[string]*app.App, len(opts.Apps)),
		traffic: make(map[string]*tally.App, len(opts.Apps)),
		limits:  opts.Limits.withDefaults(),
		log:     opts.Logger,
		conns:   make(map[*conn]struct{}),
		hurry:   make(chan struct{}),
	}
	s.authLimit = newAuthLimiter(s.limits.AuthFailuresPerMinute)
	s.presence = opts.Presence
	if s.presence == nil {
		s.presence = presence.New()
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
		s.apps[a.Key] = a
		s.traffic[a.Key] = &tally.App{}
	}
	if err := s.startHooks(opts.Apps); err != nil {
		return nil, err
	}
	s.origins = opts.AllowedOrigins
	if len(s.origins) == 0 {
		s.origins = []string{"*"}
	}
	for _, o := range s.origins {
		if o == "*" {
			s.anyOrigin = true
		}
	}
	s.store = opts.Store
	if s.store == nil {
		so := store.Options{}
		if opts.StoreOptions != nil {
			so = *opts.StoreOptions
		}
		so.Retention = s.retention
		so.Group = StoreGroup
		so.Epoch = chanlog.StoreEpoch(opts.Journal)
		s.store = store.New(&so)
		s.ownStore = true
	}
	s.codecUse = payload.NewUsage(s.store.Now)
	s.chlog = chanlog.New(chanlog.JournalConfig{Journal: opts.Journal, Store: s.store,
		Retention: s.retention, Group: StoreGroup, Log: s.log})
	s.ttl = deadman.New(s.store, s.chlog)
	s.chlog.OnSwitch(s.ttl.Standby)
	s.engine = delivery.New(&delivery.Config{Store: s.store, Counters: &s.counters, FirstDelivery: opts.FirstDelivery,
		Logger: s.log, QueueBytes: s.limits.QueueBytes, PrefixChannels: s.limits.PrefixChannels})
	return s, nil
}

// Store returns the store the server appends to.
func (s *Server) Store() *store.Store { return s.store }

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

// ServeHTTP serves the RTM endpoint at /v2.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v2" && r.URL.Path != "/v2/" {
		http.NotFound(w, r)
		return
	}
	s.accept(w, r)
}

// goingAway is the close reason of connections ended by Shutdown.
const goingAway = "going away: edge shutting down"

// enter admits a connection attempt unless shutting down. Shutdown waits
// for every attempt admitted, upgraded yet or not; the caller calls
// s.wg.Done when the attempt ends.
func (s *Server) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.wg.Add(1)
	return true
}

// track registers an upgraded connection. One whose upgrade raced with
// Shutdown is told to go away at once, or dropped if Shutdown's deadline
// has passed, so that Shutdown never waits for it beyond its deadline.
func (s *Server) track(c *conn) {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	closing, aborting := s.closing, s.aborting
	s.mu.Unlock()
	switch {
	case aborting:
		c.Abort()
	case closing:
		c.CloseWith(websocket.StatusGoingAway, goingAway)
	}
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Shutdown stops accepting connections, closes every open one with 1001
// "going away" so clients reconnect elsewhere (spread over
// Limits.DrainSpread, see BeginDrain), and waits for their handlers to
// finish or ctx to end. It closes the store if the server created it. It
// is idempotent; later calls wait the same way.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutOnce.Do(func() {
		s.mu.Lock()
		s.closing = true
		conns := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		s.closeSpread(ctx, conns)
	})
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		s.aborting = true
		for c := range s.conns {
			c.Abort()
		}
		s.mu.Unlock()
		<-done
		err = ErrShutdown
	}
	// After the connections: none arms a switch any more.
	s.ttl.Close()
	// After the connections, so that their disconnect events are queued.
	s.closeHooks(ctx)
	if s.ownStore {
		s.store.Close()
	}
	return err
}

// Ready says why the edge cannot serve clients, or returns nil: it is
// draining, or its journal cannot store or has not caught up.
func (s *Server) Ready() error {
	if s.Draining() {
		return errors.New("draining: the edge is shutting down")
	}
	return s.chlog.Ready()
}

// Draining reports whether BeginDrain or Shutdown has begun.
func (s *Server) Draining() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unready || s.closing
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

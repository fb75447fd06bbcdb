package edgecmd

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/edge/admin"
	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/metrics"
	"github.com/sluicehq/sluice/edge/server"
	edgetls "github.com/sluicehq/sluice/edge/tls"
)

// listeners is everything the edge listens with: the main listener (RTM at
// /v2, health, metrics; HTTPS with TLS), the HTTP listener beside HTTPS
// (ACME http-01 challenges, redirects), the admin listener, and the
// certificate manager.
type listeners struct {
	srv     *server.Server
	log     *slog.Logger
	certs   *edgetls.Manager // nil without TLS
	lns     []net.Listener   // parallel to servers
	servers []*http.Server
	url     string // the RTM endpoint, for the banner
	addr    string // the main listener's address
	admin   string // the admin listener's address, "" for none
	http    string // the HTTP listener's address beside HTTPS, "" for none
	peers   *peerLimit
	idle    time.Duration // limits.idle_timeout
}

// defaultIdleTimeout is limits.idle_timeout's default.
const defaultIdleTimeout = 60 * time.Second

// Bounds on reading one HTTP request, lowered to the idle timeout when it
// is shorter: a client that opens a connection and sends nothing, or a
// request byte by byte, must not hold a descriptor for long.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
)

// openListeners opens the listeners the configuration asks for and, with
// TLS, prepares the certificates; nothing is served before run.
// dur is the edge's durability, nil for an edge in memory: the API's
// info describes it. version is what the demo pages show.
func openListeners(cfg *Config, srv *server.Server, dur *durability, m *metrics.Metrics, lg *slog.Logger, version string) (*listeners, error) {
	l := &listeners{srv: srv, log: lg,
		peers: newPeerLimit(cmp.Or(cfg.Limits.ConnectionsPerIP, defaultConnectionsPerIP), srv),
		idle:  cmp.Or(time.Duration(cfg.Limits.IdleTimeout), defaultIdleTimeout),
	}
	main, err := l.listen(cfg.ListenAddr())
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.ListenAddr(), err)
	}
	l.addr = main.Addr().String()
	mainMux, err := newHandler(srv, cfg.Web, version)
	if err != nil {
		main.Close()
		return nil, err
	}
	apiOpts := &api.Options{Logger: lg,
		RequestsPerSecond: cfg.Limits.APIRequestsPerSecond, RequestBurst: cfg.Limits.APIRequestBurst}
	if dur != nil {
		apiOpts.Journals, apiOpts.Node = dur.js, dur.node
	}
	backend := api.New(srv, apiOpts)
	if err := m.WatchAPI(backend); err != nil {
		main.Close()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mainMux.Handle(api.Prefix, backend)
	if err := l.openAdmin(cfg, m, backend); err != nil {
		main.Close()
		return nil, err
	}
	metricsOnMain := m.Handler()
	if l.admin != "" {
		metricsOnMain = nil
	}
	addOps(mainMux, l.ready, metricsOnMain)
	if !cfg.TLS.enabled() {
		l.add(main, mainMux)
		l.url = "ws://" + main.Addr().String()
		return l, nil
	}
	if err := l.openTLS(cfg, main, mainMux, m); err != nil {
		l.closeListeners()
		main.Close()
		return nil, err
	}
	return l, nil
}

// openAdmin opens the admin listener when configured. It serves the
// server API too, for backends on the operators' network, and the admin
// page, which uses that API with the key an operator logs in with.
func (l *listeners) openAdmin(cfg *Config, m *metrics.Metrics, backend *api.Handler) error {
	if cfg.Admin.Listen == "" {
		return nil
	}
	ln, err := l.listen(cfg.Admin.Listen)
	if err != nil {
		return fmt.Errorf("admin listen on %s: %w", cfg.Admin.Listen, err)
	}
	l.admin = ln.Addr().String()
	mux := http.NewServeMux()
	mux.Handle("/", adminHandler(l.ready, m.Handler()))
	mux.Handle(api.Prefix, backend)
	mux.Handle(admin.Prefix, admin.New(backend, &admin.Options{Ready: l.ready, Logger: l.log,
		FailuresPerMinute: cfg.Limits.AuthFailuresPerMinute}))
	// The listener's root, which served nothing, leads to the page.
	mux.Handle("GET /{$}", http.RedirectHandler(admin.Prefix, http.StatusFound))
	l.add(ln, mux)
	return nil
}

// openTLS sets up the certificate manager, wraps main in TLS and opens the
// HTTP listener.
func (l *listeners) openTLS(cfg *Config, main net.Listener, mainMux http.Handler, m *metrics.Metrics) error {
	var plain net.Listener
	if addr := cfg.TLS.httpListen(); addr != "" {
		var err error
		if plain, err = l.listen(addr); err != nil {
			return fmt.Errorf("tls.http_listen on %s: %w", addr, err)
		}
	}
	httpPort := 0
	if plain != nil {
		httpPort = portOf(plain.Addr())
	}
	host, _, _ := net.SplitHostPort(cfg.ListenAddr())
	opts := cfg.TLS.options(portOf(main.Addr()), httpPort, host)
	opts.Logger = l.log
	roots, err := cfg.TLS.caRoots()
	if err == nil {
		opts.CARoots = roots
		l.certs, err = edgetls.New(opts)
	}
	if err == nil {
		err = m.WatchTLS(l.certs)
	}
	if err != nil {
		if plain != nil {
			plain.Close()
		}
		return err
	}
	l.add(tls.NewListener(main, l.certs.TLSConfig()), mainMux)
	redirect := cfg.TLS.RedirectPort
	if redirect == 0 {
		redirect = portOf(main.Addr())
	}
	if plain != nil {
		l.http = plain.Addr().String()
		l.add(plain, l.certs.HTTPHandler(edgetls.RedirectHandler(redirect)))
	}
	l.url = "wss://" + publicHost(cfg, main.Addr())
	return nil
}

// publicHost is the host (and port unless 443) clients use over TLS.
func publicHost(cfg *Config, addr net.Addr) string {
	host := "localhost"
	if len(cfg.TLS.Domains) > 0 {
		host = cfg.TLS.Domains[0]
	}
	if p := portOf(addr); p != 443 {
		host = net.JoinHostPort(host, strconv.Itoa(p))
	}
	return host
}

// listen opens a TCP listener whose connections count against the
// per-address limit; TLS, when used, wraps it.
func (l *listeners) listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return l.peers.listener(ln), nil
}

// busyPortHint adds to an error of a port in use (the edge's listeners',
// or the embedded NATS node's, whose error is text) its likely cause: an
// edge stopped with SIGTERM keeps its ports while it drains, for its
// drain_delay (5 s by default) and then while it closes its connections,
// so a restart right after the kill finds them taken.
func busyPortHint(err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) && !strings.Contains(err.Error(), "address already in use") {
		return err
	}
	return fmt.Errorf("%w (an edge may still be draining on this port: after SIGTERM one serves on for its "+
		"limits.drain_delay, 5s by default, then closes its connections within limits.shutdown_timeout; "+
		"wait for it to exit, or see what holds the port with `ss -ltnp`)", err)
}

// add pairs a listener with a server for its handler. Every listener has
// the same timeouts, so no HTTP connection is held forever; a WebSocket
// upgrade hijacks its connection, which clears the deadlines these set
// (net/http), and from then on the edge's pings and write timeout watch it.
// There is no WriteTimeout: it would cut /debug/pprof/profile short.
func (l *listeners) add(ln net.Listener, h http.Handler) {
	l.lns = append(l.lns, ln)
	l.servers = append(l.servers, &http.Server{
		Handler:           l.peers.handler(h),
		ReadHeaderTimeout: min(readHeaderTimeout, l.idle),
		ReadTimeout:       min(readTimeout, l.idle),
		IdleTimeout:       l.idle,
		ConnContext:       l.peers.connContext,
		ErrorLog:          log.New(serverErrors{l.log}, "", 0),
	})
}

func (l *listeners) closeListeners() {
	for _, ln := range l.lns {
		ln.Close()
	}
	if l.certs != nil {
		l.certs.Close()
	}
}

// ready is the edge's readiness: not draining, its journal (if any)
// serving, and certificates obtained.
func (l *listeners) ready() (bool, string) {
	if err := l.srv.Ready(); err != nil {
		return false, err.Error()
	}
	if l.certs != nil {
		select {
		case <-l.certs.Ready():
		default:
			return false, "waiting for TLS certificates"
		}
	}
	return true, ""
}

// run serves until stopping ends (Edge.Shutdown, Edge.Close), then
// drains (see drain): the edge reports not-ready, refuses new
// connections, closes open ones with 1001 "going away" so clients
// reconnect elsewhere, and returns. again cuts a slow drain short.
func (l *listeners) run(stopping context.Context, d drainTimes, again <-chan struct{}) error {
	errc := make(chan error, len(l.servers))
	var wg sync.WaitGroup
	for i, hs := range l.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := hs.Serve(l.lns[i]); !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		}()
	}
	if l.certs != nil {
		l.certs.Start() // the CA validates through the listeners, now serving
	}
	var failed error
	select {
	case failed = <-errc:
		l.log.Error("serving failed; shutting down", "err", failed)
	case <-stopping.Done():
	}
	l.drain(d, slowDrain(stopping, failed), again)
	wg.Wait()
	if failed != nil {
		return fmt.Errorf("serve: %w", failed)
	}
	return nil
}

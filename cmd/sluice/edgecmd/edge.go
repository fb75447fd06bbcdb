package edgecmd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/metrics"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/server"
)

// Options are what an edge is started with besides its Config; nil
// means every default.
type Options struct {
	// Stdout receives the banner (what the edge serves, as configured).
	// Default: discarded.
	Stdout io.Writer
	// Stderr receives the logs, at the level and in the format of the
	// Config's log section, from the edge's goroutines: it must be safe
	// for concurrent writes, as os.Stderr is. Default: discarded.
	Stderr io.Writer
	// ReadyFile, when set, is written once the edge listens (package
	// readyfile: its URL, addresses, appkeys and pid) and removed when it
	// stops; one left by an edge that was killed is removed at the start.
	// Default none.
	ReadyFile string
	// Version is what the banner, sluice_build_info and the demo pages
	// report. Default "dev".
	Version string
	// Program is how the operator runs the sluice binary (such as
	// "./bin/sluice" after `make run`), for the commands the banner
	// suggests. Default "sluice".
	Program string
}

// Edge is a running edge: what `sluice edge` runs, for a process or a
// test to start on port 0 and stop. Start it with Start; stop it with
// Shutdown (as SIGTERM does) or Close (as SIGINT does).
type Edge struct {
	opts Options
	info readyfile.Info
	log  *slog.Logger

	// stopping ends when a stop begins; its cause says which
	// (errShutdown, errClosed or journal.ErrStreamLost) and so how the
	// edge drains (slowDrain). Cancelled by Shutdown, Close, or the
	// journal when the stream is lost.
	stopping  context.Context
	beginStop context.CancelCauseFunc
	// hurry gets a value for each request to cut a slow drain short: each
	// ends the wait under way (the delay, then the spread), as a further
	// SIGTERM does. Sent to without blocking; 2 values do it all.
	hurry chan struct{}
	done  chan struct{} // closed when the edge has stopped
	err   error         // why it stopped; written before done is closed
}

// How a stop began: the cause given to Edge.stopping.
var (
	errShutdown = errors.New("edgecmd: shutdown")
	errClosed   = errors.New("edgecmd: closed")
)

// Start starts an edge as cfg configures it, and returns once it serves:
// its listeners open, its journal (if durable) replayed, its banner
// printed and its ready file written. ctx bounds the start alone (a
// durable edge waits for JetStream); the edge then runs until Shutdown,
// Close, or a failure that Wait returns. cfg is validated here (as
// LoadConfig does); set Listen to "127.0.0.1:0" for a free port, which
// Info then names.
func Start(ctx context.Context, cfg *Config, opts *Options) (*Edge, error) {
	e := &Edge{hurry: make(chan struct{}, 2), done: make(chan struct{})}
	if opts != nil {
		e.opts = *opts
	}
	e.opts.Stdout = cmpWriter(e.opts.Stdout)
	e.opts.Stderr = cmpWriter(e.opts.Stderr)
	if e.opts.Version == "" {
		e.opts.Version = "dev"
	}
	sopts, err := cfg.ServerOptions()
	if err != nil {
		return nil, err
	}
	e.log = newLogger(cfg.Log.Level, cfg.Log.Format, e.opts.Stderr)
	if err := removeReadyFile(e.opts.ReadyFile); err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings() {
		e.log.Warn("config: " + w)
	}
	sopts.Logger = e.log
	e.stopping, e.beginStop = context.WithCancelCause(context.Background())
	run, err := e.start(ctx, cfg, sopts)
	if err != nil {
		err = busyPortHint(err)
		e.beginStop(err)
		return nil, err
	}
	go func() {
		defer close(e.done)
		e.err = run()
	}()
	return e, nil
}

// start builds and opens what the edge serves with, and returns what
// serves until the stop and then drains and closes it all. On an error
// everything it opened is closed.
func (e *Edge) start(ctx context.Context, cfg *Config, opts *server.Options) (func() error, error) {
	m := metrics.New(e.opts.Version)
	// A durable edge whose stream is deleted under it drains and stops
	// with the reason (journal.ErrStreamLost), so that its supervisor
	// restarts it on the stream as it is now; also while it starts.
	ctx, lostStart := context.WithCancelCause(ctx)
	defer lostStart(nil)
	lost := func(err error) {
		e.beginStop(err)
		lostStart(err)
	}
	var dur *durability
	var err error
	if cfg.durable() {
		opts.Presence = presence.New() // fed from the other edges, too
		if dur, err = startDurability(ctx, cfg, opts.Apps, opts.Presence, m.AckLatency(), lost, e.log); err != nil {
			return nil, err
		}
		for _, j := range dur.js {
			opts.Journals = append(opts.Journals, j)
		}
		if err := m.WatchJournal(dur.js...); err != nil {
			dur.close()
			return nil, err
		}
	}
	opts.FirstDelivery = m.FirstDelivery()
	srv, l, err := e.serve(ctx, cfg, opts, dur, m)
	if err != nil {
		dur.close()
		return nil, err
	}
	stats := startStats(e.stopping, srv, edgeName(cfg, dur, l), e.log)
	printBanner(e.opts, l, cfg, opts, dur)
	// Last before serving: whoever reads the file finds the banner out.
	e.info = readyInfo(l, opts)
	unannounce, err := announceReady(e.opts.ReadyFile, e.info, e.log)
	if err != nil {
		stats.Stop()
		l.closeListeners()
		srv.Shutdown(context.Background())
		dur.close()
		return nil, err
	}
	return func() error {
		err := l.run(e.stopping, drainTimes{delay: cfg.Limits.drainDelay(), grace: opts.Limits.ShutdownTimeout}, e.hurry)
		unannounce() // after the drain, whatever its outcome
		stats.Stop()
		dur.close() // after the server's drain: publishes in flight get their answer
		if cause := context.Cause(e.stopping); errors.Is(cause, journal.ErrStreamLost) {
			return errors.Join(cause, err)
		}
		return err
	}, nil
}

// serve creates the server, feeds it the journal (if any) and opens its
// listeners; nothing is served before listeners.run.
func (e *Edge) serve(ctx context.Context, cfg *Config, opts *server.Options, dur *durability, m *metrics.Metrics) (*server.Server, *listeners, error) {
	srv, err := server.New(opts)
	if err != nil {
		return nil, nil, err
	}
	if dur != nil {
		if err := dur.awaitReplay(ctx, srv, e.log); err != nil {
			srv.Shutdown(context.Background())
			return nil, nil, err
		}
	}
	var l *listeners
	if err = m.Watch(srv); err == nil {
		l, err = openListeners(cfg, srv, dur, m, e.log, e.opts.Version)
	}
	if err == nil {
		if err = m.WatchReady(func() bool { ok, _ := l.ready(); return ok }); err != nil {
			l.closeListeners()
		}
	}
	if err != nil {
		srv.Shutdown(context.Background())
		return nil, nil, err
	}
	return srv, l, nil
}

// Info is where the edge serves, as its ready file says: the RTM URL, the
// listeners' addresses, the appkeys, and the process id.
func (e *Edge) Info() readyfile.Info {
	info := e.info
	info.AppKeys = slices.Clone(info.AppKeys)
	return info
}

// URL is the edge's RTM endpoint, ws://host:port or wss://host:port; a
// client dials URL() + "/v2?appkey=...".
func (e *Edge) URL() string { return e.info.URL }

// Shutdown stops the edge as SIGTERM stops `sluice edge`: /readyz
// answers 503 for limits.drain_delay while it serves on, then it refuses
// new connections and closes the open ones with 1001 going away, spread
// over limits.drain_spread, within limits.shutdown_timeout. It returns
// once the edge has stopped, with what Wait returns. If ctx ends first,
// the drain's waits are cut short (the delay, the spread) and Shutdown
// returns ctx's error while the edge closes its connections; Wait or
// Close waits for that. Calling it again, or after Close, waits for the
// same stop.
func (e *Edge) Shutdown(ctx context.Context) error {
	e.beginStop(errShutdown) // a stop already under way keeps its cause
	select {
	case <-e.done:
		return e.err
	case <-ctx.Done():
		e.hurryAll()
		return ctx.Err()
	}
}

// Close stops the edge as SIGINT stops `sluice edge`: no readiness delay
// and no spread, the open connections closed at once with 1001 going
// away (and dropped if they have not answered within
// limits.shutdown_timeout). During a Shutdown it cuts the drain's waits
// short. It returns once the edge has stopped, with what Wait returns;
// calling it again does the same.
func (e *Edge) Close() error {
	e.beginStop(errClosed)
	e.hurryAll()
	<-e.done
	return e.err
}

// Wait waits until the edge has stopped and returns why: nil after
// Shutdown or Close, else the failure that stopped it (a listener that
// failed, or journal.ErrStreamLost for a durable edge whose stream was
// deleted).
func (e *Edge) Wait() error {
	<-e.done
	return e.err
}

// Done is closed once the edge has stopped.
func (e *Edge) Done() <-chan struct{} { return e.done }

// hurryOne cuts the drain's wait under way short, as a further signal
// does; a request beyond the two waits is dropped.
func (e *Edge) hurryOne() {
	select {
	case e.hurry <- struct{}{}:
	default:
	}
}

// hurryAll cuts every wait of the drain short.
func (e *Edge) hurryAll() {
	e.hurryOne()
	e.hurryOne()
}

// cmpWriter returns w, or io.Discard for nil.
func cmpWriter(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

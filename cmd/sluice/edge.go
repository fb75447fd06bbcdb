package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/metrics"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/server"
)

// runEdge serves RTM v2 until ctx ends (SIGINT, SIGTERM), then drains: it
// reports not-ready, refuses new connections, closes open ones with 1001
// "going away" and returns within the shutdown timeout (listeners.run,
// drain).
func runEdge(ctx context.Context, args []string, s stdio) error {
	cfg, err := edgeConfig(args, s)
	if err != nil {
		return err
	}
	opts, err := cfg.ServerOptions()
	if err != nil {
		return err
	}
	if cfg.checkPath != "" {
		return reportConfig(s, cfg)
	}
	logger, err := newLogger(cfg.Log.Level, cfg.Log.Format, s.errw)
	if err != nil {
		return err
	}
	if err := removeReadyFile(cfg.readyFile); err != nil {
		return err
	}
	for _, w := range cfg.Warnings() {
		logger.Warn("config: " + w)
	}
	opts.Logger = logger
	m := metrics.New(Version())
	// A durable edge whose stream is deleted under it drains and exits
	// with the reason (journal.ErrStreamLost), so that its supervisor
	// restarts it on the stream as it is now.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var dur *durability
	if cfg.durable() {
		opts.Presence = presence.New() // fed from the other edges, too
		if dur, err = startDurability(ctx, cfg, opts.Apps, opts.Presence, m.AckLatency(), stop, logger); err != nil {
			return err
		}
		// After the server's drain: publishes in flight get their answer.
		defer dur.close()
		opts.Journal = dur.j
		if err := m.WatchJournal(dur.j); err != nil {
			return err
		}
	}
	opts.FirstDelivery = m.FirstDelivery()
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	if dur != nil {
		if err := dur.awaitReplay(ctx, srv, logger); err != nil {
			srv.Shutdown(context.Background())
			return err
		}
	}
	var l *listeners
	if err = m.Watch(srv); err == nil {
		l, err = openListeners(cfg, srv, dur, m, logger)
	}
	if err != nil {
		srv.Shutdown(context.Background())
		return err
	}
	stats := startStats(ctx, srv, logger)
	defer stats.Stop()
	printBanner(s, l, cfg, opts, dur)
	// Last before serving: whoever reads the file finds the banner out.
	unannounce, err := announceReady(cfg.readyFile, l, opts.Apps, logger)
	if err != nil {
		l.closeListeners()
		srv.Shutdown(context.Background())
		return err
	}
	defer unannounce() // after the drain, whatever its outcome
	err = l.run(ctx, drainTimes{delay: cfg.Limits.drainDelay(), grace: opts.Limits.ShutdownTimeout})
	if cause := context.Cause(ctx); errors.Is(cause, journal.ErrStreamLost) {
		return errors.Join(cause, err)
	}
	return err
}

const edgeUsage = `edge [flags]

Serves RTM v2 over WebSocket, the demo pages and the browser client. Without
--config: the app "demo" on 127.0.0.1:8080, in memory. Flags override the
config file. Stops on SIGINT or SIGTERM, draining connections first.`

// edgeConfig parses the edge's flags and loads its configuration: the
// file's (or the default), with the flags given written over it.
func edgeConfig(args []string, s stdio) (*Config, error) {
	fs := newFlagSet("edge", edgeUsage, s)
	listen := fs.String("listen", "", "address to serve on (default 127.0.0.1:8080, :443 with TLS, or the config's listen)")
	configPath := fs.String("config", "", "YAML config file (default: embedded single-node config with app \"demo\")")
	checkPath := fs.String("check-config", "", "validate this YAML config file (with the other flags given), print its warnings and exit: 0 if valid")
	readyFile := fs.String("ready-file", "", "once listening, write the edge's URL, addresses, appkeys and pid to this file as JSON; removed on exit")
	logLevel := fs.String("log-level", "", "log level: debug, info, warn, error (default info)")
	logFormat := fs.String("log-format", "", "log format: text or json (default text)")
	var ops opsFlags
	ops.register(fs)
	var cl clusterFlags
	cl.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if *checkPath != "" {
		if *configPath != "" && *configPath != *checkPath {
			return nil, fmt.Errorf("%w: --check-config %s and --config %s name different files", errUsage, *checkPath, *configPath)
		}
		*configPath = *checkPath
	}
	cfg := DefaultConfig()
	if *configPath != "" {
		var err error
		if cfg, err = LoadConfig(*configPath); err != nil {
			return nil, err
		}
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *logLevel != "" {
		cfg.Log.Level = *logLevel
	}
	if *logFormat != "" {
		cfg.Log.Format = *logFormat
	}
	ops.apply(cfg)
	cl.apply(cfg)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.checkPath = *checkPath
	cfg.readyFile = *readyFile
	return cfg, nil
}

// reportConfig is what --check-config prints of a valid configuration:
// its warnings on stderr, then one line on stdout.
func reportConfig(s stdio, cfg *Config) error {
	ws := cfg.Warnings()
	for _, w := range ws {
		fmt.Fprintf(s.errw, "warning: %s\n", w)
	}
	what := "valid"
	if len(ws) > 0 {
		what = fmt.Sprintf("valid, with %d warning(s)", len(ws))
	}
	_, err := fmt.Fprintf(s.out, "config %s: %s\n", cfg.checkPath, what)
	return err
}

// printBanner says what the edge serves, as configured: the demo line
// only when the demo pages are on (with the appkey they need), the "Try"
// line only when the app it uses (the default "demo") is served.
func printBanner(s stdio, l *listeners, cfg *Config, opts *server.Options, dur *durability) {
	fmt.Fprintf(s.out, "Sluice edge %s serving RTM v2\n", Version())
	fmt.Fprintf(s.out, "  url:    %s\n", l.url)
	if cfg.Web.demo() && len(opts.Apps) > 0 {
		fmt.Fprintf(s.out, "  demo:   %s\n", demoURL(l.url, opts.Apps[0].Key))
	}
	if l.certs != nil {
		fmt.Fprintf(s.out, "  tls:    %s\n", l.certs)
	}
	if l.http != "" {
		fmt.Fprintf(s.out, "  http:   %s (ACME http-01, redirects to HTTPS)\n", l.http)
	}
	if dur != nil {
		fmt.Fprintf(s.out, "  store:  %s (JetStream stream %s, epoch %d)\n", dur.desc, dur.j.Stream(), dur.j.Epoch())
	}
	if l.admin != "" {
		fmt.Fprintf(s.out, "  admin:  http://%s/metrics\n", l.admin)
	}
	demoApp := false
	for _, a := range opts.Apps {
		fmt.Fprintf(s.out, "  appkey: %s\n", a.Key)
		demoApp = demoApp || a.Key == app.Demo().Key
	}
	if demoApp {
		// The demo chat's room #lobby: what the CLI prints, the page shows.
		fmt.Fprintf(s.out, "Try:  sluice sub chat.lobby   and, in another terminal,   sluice pub chat.lobby '{\"user\":\"cli\",\"text\":\"hi\"}'\n")
	}
}

// announceReady writes the ready file at path (package readyfile), if
// path is not "", and returns what removes it.
func announceReady(path string, l *listeners, apps []*app.App, lg *slog.Logger) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	info := readyfile.Info{URL: l.url, Listen: l.addr, Admin: l.admin, HTTP: l.http, PID: os.Getpid()}
	for _, a := range apps {
		info.AppKeys = append(info.AppKeys, a.Key)
	}
	if err := readyfile.Write(path, info); err != nil {
		return nil, err
	}
	return func() {
		if err := removeReadyFile(path); err != nil {
			lg.Warn(err.Error())
		}
	}, nil
}

// removeReadyFile removes the ready file at path, if any; "" is none.
func removeReadyFile(path string) error {
	if path == "" {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("ready file: %w", err)
	}
	return nil
}

func newLogger(level, format string, w interface{ Write([]byte) (int, error) }) (*slog.Logger, error) {
	var lv slog.Level
	if level == "" {
		level = "info"
	}
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w: log level %q: want debug, info, warn or error", errUsage, level)
	}
	ho := &slog.HandlerOptions{Level: lv}
	switch format {
	case "", "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("%w: log format %q: want text or json", errUsage, format)
}

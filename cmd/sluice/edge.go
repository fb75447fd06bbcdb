package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/edge/server"
)

// runEdge serves RTM v2 until ctx ends (SIGINT, SIGTERM), then shuts down
// gracefully: it stops accepting, closes connections with 1001 "going
// away" and exits within the shutdown timeout.
func runEdge(ctx context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(s.errw)
	listen := fs.String("listen", "", "address to serve on (default 127.0.0.1:8080, or the config's listen)")
	configPath := fs.String("config", "", "YAML config file (default: embedded single-node config with app \"demo\")")
	logLevel := fs.String("log-level", "", "log level: debug, info, warn, error (default info)")
	logFormat := fs.String("log-format", "", "log format: text or json (default text)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	cfg := DefaultConfig()
	if *configPath != "" {
		var err error
		if cfg, err = LoadConfig(*configPath); err != nil {
			return err
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
	if err := cfg.Validate(); err != nil {
		return err
	}
	logger, err := newLogger(cfg.Log.Level, cfg.Log.Format, s.errw)
	if err != nil {
		return err
	}
	opts, err := cfg.ServerOptions()
	if err != nil {
		return err
	}
	opts.Logger = logger
	srv, err := server.New(opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		srv.Shutdown(context.Background())
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	printBanner(s, ln.Addr().String(), opts)
	return serve(ctx, srv, ln, opts.Limits.ShutdownTimeout, logger)
}

// serve runs the HTTP server on ln until ctx ends, then drains.
func serve(ctx context.Context, srv *server.Server, ln net.Listener, grace time.Duration, log *slog.Logger) error {
	hs := &http.Server{
		Handler:           newHandler(srv),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		srv.Shutdown(context.Background())
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", grace)
	if grace <= 0 {
		grace = 10 * time.Second
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	hs.Shutdown(sctx) // stops accepting; hijacked WebSockets are the edge's
	err := srv.Shutdown(sctx)
	if e := <-errc; e != nil && !errors.Is(e, http.ErrServerClosed) {
		log.Warn("http server", "err", e)
	}
	log.Info("stopped")
	return err
}

func printBanner(s stdio, addr string, opts *server.Options) {
	fmt.Fprintf(s.out, "Sluice edge %s serving RTM v2\n", version)
	fmt.Fprintf(s.out, "  url:    ws://%s\n", addr)
	for _, a := range opts.Apps {
		fmt.Fprintf(s.out, "  appkey: %s\n", a.Key)
	}
	fmt.Fprintf(s.out, "Try:  sluice sub chat   and, in another terminal,   sluice pub chat '{\"text\":\"hi\"}'\n")
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

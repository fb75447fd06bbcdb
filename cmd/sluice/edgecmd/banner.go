package edgecmd

// What a started edge tells its operator: the banner on standard output,
// the ready file for scripts, and the logs.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
)

// printBanner says what the edge serves, as configured: the demo line
// only when the demo pages are on (with the appkey they need), the "Try"
// line only when the app it uses (the default "demo") is served.
func printBanner(o Options, l *listeners, cfg *Config, opts *server.Options, dur *durability) {
	w := o.Stdout
	fmt.Fprintf(w, "Sluice edge %s serving RTM v2\n", o.Version)
	fmt.Fprintf(w, "  url:    %s\n", l.url)
	if cfg.Web.demo() && len(opts.Apps) > 0 {
		fmt.Fprintf(w, "  demo:   %s\n", demoURL(l.url, opts.Apps[0].Key))
	}
	if l.certs != nil {
		fmt.Fprintf(w, "  tls:    %s\n", l.certs)
	}
	if l.http != "" {
		fmt.Fprintf(w, "  http:   %s (ACME http-01, redirects to HTTPS)\n", l.http)
	}
	if dur != nil {
		fmt.Fprintf(w, "  store:  %s (JetStream stream %s, epoch %d)\n", dur.desc, dur.j.Stream(), dur.j.Epoch())
	}
	if l.admin != "" {
		fmt.Fprintf(w, "  admin:  http://%s/metrics\n", l.admin)
	}
	demoApp := false
	for _, a := range opts.Apps {
		fmt.Fprintf(w, "  appkey: %s\n", a.Key)
		demoApp = demoApp || a.Key == app.Demo().Key
	}
	if demoApp {
		// The demo chat's room #lobby: what the CLI prints, the page shows.
		fmt.Fprintf(w, "Try:  sluice sub chat.lobby   and, in another terminal,   sluice pub chat.lobby '{\"user\":\"cli\",\"text\":\"hi\"}'\n")
	}
}

// readyInfo is what the ready file says of the edge.
func readyInfo(l *listeners, opts *server.Options) readyfile.Info {
	info := readyfile.Info{URL: l.url, Listen: l.addr, Admin: l.admin, HTTP: l.http, PID: os.Getpid()}
	for _, a := range opts.Apps {
		info.AppKeys = append(info.AppKeys, a.Key)
	}
	return info
}

// announceReady writes the ready file at path (package readyfile), if
// path is not "", and returns what removes it.
func announceReady(path string, info readyfile.Info, lg *slog.Logger) (func(), error) {
	if path == "" {
		return func() {}, nil
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

// newLogger returns the logger of the log section (Validate has checked
// its level and format), writing to w.
func newLogger(level, format string, w io.Writer) *slog.Logger {
	lv, _ := logLevel(level)
	ho := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, ho))
	}
	return slog.New(slog.NewTextHandler(w, ho))
}

// logLevel parses the log section's level: "" is info.
func logLevel(s string) (slog.Level, error) {
	var lv slog.Level
	if s == "" {
		return slog.LevelInfo, nil
	}
	err := lv.UnmarshalText([]byte(s))
	return lv, err
}

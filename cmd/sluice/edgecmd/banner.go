package edgecmd

// What a started edge tells its operator: the banner on standard output,
// the ready file for scripts, and the logs.

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"

	"github.com/sluicehq/sluice/cmd/sluice/readyfile"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
)

// printBanner says what the edge serves, as configured: the demo line
// only when the demo pages are on (with the appkey they need), the "Try"
// line only when the app it uses (the default "demo") is served. With
// JSON logs it is one JSON object on its line, as the logs are, so that
// a log shipper reading the edge's output together takes it too.
func printBanner(o Options, l *listeners, cfg *Config, opts *server.Options, dur *durability) {
	b := bannerOf(o, l, cfg, opts, dur)
	if cfg.Log.Format == "json" {
		slog.New(slog.NewJSONHandler(o.Stdout, nil)).Info("sluice edge serving RTM v2", b.attrs()...)
		return
	}
	b.print(o.Stdout)
}

// banner is what the banner says: its lines, by name, in order.
type banner struct {
	version string
	lines   [][2]string // name, value
	appkeys []string
	apiKey  string // the development API key an app holds (DemoAPIKey), "" for none
	try     string // the commands to try, "" for none
}

// bannerOf gathers the banner of an edge.
func bannerOf(o Options, l *listeners, cfg *Config, opts *server.Options, dur *durability) banner {
	b := banner{version: o.Version}
	add := func(name, value string) { b.lines = append(b.lines, [2]string{name, value}) }
	add("url", l.url)
	if cfg.Web.demo() && len(opts.Apps) > 0 {
		add("demo", demoURL(l.url, opts.Apps[0].Key))
	}
	if l.certs != nil {
		add("tls", fmt.Sprint(l.certs))
	}
	if l.http != "" {
		add("http", l.http+" (ACME http-01, redirects to HTTPS)")
	}
	if dur != nil {
		add("store", fmt.Sprintf("%s (%s)", dur.desc, dur.streams()))
	}
	if l.admin != "" {
		add("admin", "http://"+l.admin+"/admin/ (the admin page; metrics at /metrics)")
	}
	demoApp := false
	for _, a := range opts.Apps {
		b.appkeys = append(b.appkeys, a.Key)
		demoApp = demoApp || a.Key == app.Demo().Key
		// The development key alone: it is public (docs/server-api.md);
		// an app's own keys are secrets, never printed.
		if slices.Contains(a.APIKeys, DemoAPIKey) {
			b.apiKey = DemoAPIKey
		}
	}
	if demoApp {
		// The demo chat's room #lobby: what the CLI prints, the page shows.
		prog := cmp.Or(o.Program, "sluice")
		b.try = fmt.Sprintf("%s sub chat.lobby   and, in another terminal,   %s pub chat.lobby '{\"user\":\"cli\",\"text\":\"hi\"}'", prog, prog)
	}
	return b
}

// print writes the banner as text.
func (b banner) print(w io.Writer) {
	fmt.Fprintf(w, "Sluice edge %s serving RTM v2\n", b.version)
	for _, l := range b.lines {
		fmt.Fprintf(w, "  %-7s %s\n", l[0]+":", l[1])
	}
	for _, k := range b.appkeys {
		fmt.Fprintf(w, "  appkey: %s\n", k)
	}
	if b.apiKey != "" {
		fmt.Fprintf(w, "  api key: %s (development key of the server API, POST /api/...)\n", b.apiKey)
	}
	if b.try != "" {
		fmt.Fprintf(w, "Try:  %s\n", b.try)
	}
}

// attrs are the banner's lines as a log record's attributes.
func (b banner) attrs() []any {
	as := []any{"version", b.version}
	for _, l := range b.lines {
		as = append(as, l[0], l[1])
	}
	as = append(as, "appkeys", b.appkeys)
	if b.apiKey != "" {
		as = append(as, "api_key", b.apiKey)
	}
	if b.try != "" {
		as = append(as, "try", b.try)
	}
	return as
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

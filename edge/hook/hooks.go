package hook

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Hooks are one app's hooks and events sender. A nil *Hooks is an app
// without hooks: every question is allowed, every event skipped.
type Hooks struct {
	appkey string
	edge   string // Options.Edge
	cfg    Config
	client *http.Client
	events *Events // nil without an events URL
	log    *slog.Logger
	calls  [3]callCounters // by hookIndex
}

// Options are what an edge tells New beyond an app's Config. A nil
// *Options, and every zero field, means the documented default.
type Options struct {
	// Edge names the edge in events (Event.Edge) and prefixes their ids;
	// default a random name per New.
	Edge string
	// Logger receives the failures; default slog.Default().
	Logger *slog.Logger
}

// New returns the hooks of the app appkey, or nil when cfg sets no URL.
// With an events URL it starts the sender's goroutine: Close stops it.
func New(appkey string, cfg *Config, opts *Options) (*Hooks, error) {
	if cfg == nil || !cfg.any() {
		return nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &Options{}
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	edge := opts.Edge
	if edge == "" {
		edge = strconv.FormatUint(rand.Uint64()>>16, 36)
	}
	// A transport of the app's own: its idle connections to the backend
	// are kept for the next call (a TLS handshake per hook call would
	// take most of its timeout), and closed with it.
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: cfg.timeout(), KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          defaultMaxIdleConn,
		MaxIdleConnsPerHost:   defaultMaxIdleConn,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   cfg.timeout(),
		ExpectContinueTimeout: time.Second,
	}
	h := &Hooks{appkey: appkey, edge: edge, cfg: *cfg, client: &http.Client{Transport: tr,
		// A hook's URL is the app's, not a redirect's target: a redirect
		// is an answer that is not 2xx, a failure.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, log: log}
	if cfg.Events.URL != "" {
		h.events = newEvents(h, cfg.Events)
	}
	return h, nil
}

// Events returns the app's events sender; nil (whose Post does nothing)
// when the app has no events URL.
func (h *Hooks) Events() *Events {
	if h == nil {
		return nil
	}
	return h.events
}

// Close delivers the events still queued until ctx ends, abandons the
// rest, stops the sender's goroutine and closes the idle connections to
// the backend. It is idempotent.
func (h *Hooks) Close(ctx context.Context) {
	if h == nil {
		return
	}
	if h.events != nil {
		h.events.close(ctx)
	}
	h.client.CloseIdleConnections()
}

// Stats are one app's hook and event counts.
type Stats struct {
	Hooks  [3]HookStats // in the order of HookNames
	Events EventStats
}

// Stats returns the app's counts.
func (h *Hooks) Stats() Stats {
	var s Stats
	if h == nil {
		return s
	}
	for i := range h.calls {
		c := &h.calls[i]
		s.Hooks[i] = HookStats{Allowed: c.allowed.Load(), Denied: c.denied.Load(), Failed: c.failed.Load()}
	}
	if h.events != nil {
		s.Events = h.events.Stats()
	}
	return s
}

// Package api is the edge's server HTTP API, for apps' backends: POST
// /api/<method> with a JSON body, answered in JSON, authenticated by one of
// the app's API keys (app.App.APIKeys) in an X-API-Key header or in
// Authorization: apikey KEY. The key names the app: a backend never sends
// an appkey.
//
// A backend stands for its whole app, so no role's permissions apply, but
// every other check RTM makes does (channel names, message sizes, channel
// quotas), with RTM's error codes. Errors are {"error": CODE, "reason":
// TEXT} with an HTTP status (see status); internal errors are logged, never
// quoted.
package api

import (
	"cmp"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is the smallest default request body limit.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultIdempotencyWindow is how long an idempotency key is
	// remembered.
	DefaultIdempotencyWindow = 5 * time.Minute
	// DefaultIdempotencyKeys bounds the keys remembered at once.
	DefaultIdempotencyKeys = 100_000
)

// Options configure a Handler. A nil *Options, and every zero field, means
// the documented default.
type Options struct {
	// MaxBodyBytes bounds a request's body; larger ones are refused with
	// 413 request_too_large. Default: DefaultMaxBodyBytes (1 MiB), or
	// twice the largest app's max_message_bytes plus 64 KiB when that is
	// more, so that every message an app accepts fits, JSON-escaped.
	MaxBodyBytes int64
	// IdempotencyWindow is how long a successful publish or broadcast
	// with an idempotency_key is remembered: a retry within it stores
	// nothing and gets the first answer. Default 5 minutes.
	IdempotencyWindow time.Duration
	// IdempotencyKeys bounds how many keys are remembered, over all apps;
	// past it the oldest are forgotten first. Default 100,000.
	IdempotencyKeys int
	// Now is the clock of the idempotency window, of the rate limit and
	// of minted tokens' expiry; default time.Now.
	Now func() time.Time
	// Logger receives internal errors; default slog.Default().
	Logger *slog.Logger
	// RequestsPerSecond bounds each app's API requests, on average (a
	// token bucket per app, over all its keys); past it requests get 429
	// too_many_requests with Retry-After. Default 0: no limit.
	RequestsPerSecond int
	// RequestBurst is the bucket's size; default twice RequestsPerSecond.
	RequestBurst int
	// Journal is the edge's log of record, when it has one (a durable
	// edge, or one of a cluster): info then describes its stream. Node is
	// the embedded NATS node it runs on, if any: info then names the node,
	// its cluster's peers and meta leader. Default nil: an in-memory edge
	// (and no node).
	Journals []*journal.Journal
	Node     *journal.Node
}

// Handler serves /api/<method>. It is safe for concurrent use.
type Handler struct {
	srv      *server.Server
	keys     *keyring
	maxBody  int64
	window   *window
	log      *slog.Logger
	limits   *limiters
	counts   requestCounts
	journals []*journal.Journal // none: in memory
	apps     map[string]*app.App
	now      func() time.Time
	node     *journal.Node // nil: no embedded node
}

// New returns the API of srv, authenticating with its apps' API keys.
func New(srv *server.Server, opts *Options) *Handler {
	if opts == nil {
		opts = &Options{}
	}
	apps := srv.Apps()
	maxBody := opts.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = DefaultMaxBodyBytes
		for _, a := range apps {
			maxBody = max(maxBody, 2*int64(a.MaxMessage())+64<<10)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Handler{
		srv:      srv,
		keys:     newKeyring(apps),
		maxBody:  maxBody,
		window:   newWindow(cmp.Or(opts.IdempotencyWindow, DefaultIdempotencyWindow), cmp.Or(opts.IdempotencyKeys, DefaultIdempotencyKeys), now),
		log:      cmp.Or(opts.Logger, slog.Default()),
		limits:   newLimiters(srv.AppKeys(), opts.RequestsPerSecond, opts.RequestBurst, now),
		journals: opts.Journals,
		node:     opts.Node,
		apps:     appsByKey(apps),
		now:      now,
	}
}

// appsByKey indexes the apps, which are immutable while the edge serves.
func appsByKey(apps []*app.App) map[string]*app.App {
	m := make(map[string]*app.App, len(apps))
	for _, a := range apps {
		m[a.Key] = a
	}
	return m
}

// MaxBodyBytes returns the request body limit in force.
func (h *Handler) MaxBodyBytes() int64 { return h.maxBody }

// Prefix is the path the API is served under.
const Prefix = "/api/"

// ServeHTTP checks, in order: the HTTP method (405), the API key (401), the
// app's rate limit (429), the API method (404), the body's size (413);
// then the method decodes the body (400) and answers. Every answer is
// counted (Stats).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, _ := strings.CutPrefix(r.URL.Path, Prefix)
	m, known := methods[name]
	label := name
	if !known {
		label = "unknown"
	}
	appKey, code := h.serve(w, r, name, m)
	h.counts.add(appKey, label, code)
}

// serve answers a request and returns its app and code, for the counts.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, name string, m method) (appKey, code string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return "", h.refuse(w, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
			Reason: "the API takes POST requests with a JSON body"})
	}
	appKey, err := h.keys.authenticate(r.Header)
	if err != nil {
		return "", h.refuse(w, err)
	}
	if e := h.limits.allow(appKey); e != nil {
		return appKey, h.refuse(w, e)
	}
	if m == nil {
		return appKey, h.refuse(w, &Error{Status: http.StatusNotFound, Code: CodeUnknownMethod,
			Reason: "no API method " + quote(name) + "; the methods are " + methodList})
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return appKey, h.refuse(w, &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeRequestTooLarge,
				Reason: "the request body is larger than " + itoa(h.maxBody) + " bytes"})
		}
		return appKey, h.refuse(w, &Error{Status: http.StatusBadRequest, Code: CodeInvalidFormat, Reason: "the request body could not be read"})
	}
	out, err := m(h, r, appKey, body)
	if err != nil {
		return appKey, h.fail(w, name, err)
	}
	writeJSON(w, http.StatusOK, out)
	return appKey, "ok"
}

// refuse answers err and returns its code.
func (h *Handler) refuse(w http.ResponseWriter, err error) string {
	e, _ := asError(err)
	writeError(w, e)
	return e.Code
}

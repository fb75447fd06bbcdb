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
	// Now is the clock of the idempotency window; default time.Now.
	Now func() time.Time
	// Logger receives internal errors; default slog.Default().
	Logger *slog.Logger
}

// Handler serves /api/<method>. It is safe for concurrent use.
type Handler struct {
	srv     *server.Server
	keys    *keyring
	maxBody int64
	window  *window
	log     *slog.Logger
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
		srv:     srv,
		keys:    newKeyring(apps),
		maxBody: maxBody,
		window:  newWindow(cmp.Or(opts.IdempotencyWindow, DefaultIdempotencyWindow), cmp.Or(opts.IdempotencyKeys, DefaultIdempotencyKeys), now),
		log:     cmp.Or(opts.Logger, slog.Default()),
	}
}

// MaxBodyBytes returns the request body limit in force.
func (h *Handler) MaxBodyBytes() int64 { return h.maxBody }

// Prefix is the path the API is served under.
const Prefix = "/api/"

// ServeHTTP checks, in order: the HTTP method (405), the API key (401), the
// API method (404), the body's size (413); then the method decodes the
// body (400) and answers.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
			Reason: "the API takes POST requests with a JSON body"})
		return
	}
	appKey, err := h.keys.authenticate(r.Header)
	if err != nil {
		writeError(w, err)
		return
	}
	name, _ := strings.CutPrefix(r.URL.Path, Prefix)
	m, ok := methods[name]
	if !ok {
		writeError(w, &Error{Status: http.StatusNotFound, Code: CodeUnknownMethod,
			Reason: "no API method " + quote(name) + "; the methods are " + methodList})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeRequestTooLarge,
				Reason: "the request body is larger than " + itoa(h.maxBody) + " bytes"})
			return
		}
		writeError(w, &Error{Status: http.StatusBadRequest, Code: CodeInvalidFormat, Reason: "the request body could not be read"})
		return
	}
	out, err := m(h, r, appKey, body)
	if err != nil {
		h.fail(w, name, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// Package admin serves an edge's web page for operators, on the admin
// listener: the app's channels and their subscribers, a channel's history
// as it grows, its presence, disconnecting a user or a connection,
// publishing as the server, and the edge's and its cluster's health.
//
// The page is plain HTML, CSS and JavaScript embedded in the binary (page/),
// and everything it shows or does goes through the server API (edge/api),
// so it can do exactly what a backend holding the same key can. An
// operator logs in with one of an app's API keys (api_keys), which names
// the app the session is for; the key is checked as the API checks it (in
// constant time, against every key) and kept server-side in the session.
//
// The session is a cookie holding a random 256-bit token: HttpOnly (no
// script reads it, so an injected script cannot carry the session off),
// SameSite=Strict, Path /admin/, Secure over TLS, ended by logging out,
// after IdleTimeout unused, MaxAge after the login, or by a restart. The
// alternative, the key in sessionStorage sent as a header, is immune to
// CSRF by construction but hands the key itself to any script the page
// runs; a cookie hands out only a session that ends. CSRF is refused on
// every POST: SameSite alone ignores ports (another listener of the same
// host is "same site"), so cross-origin requests are refused by their
// Sec-Fetch-Site or Origin header (net/http's CrossOriginProtection), and
// a POST must be application/json, which no cross-origin form can send
// without a CORS preflight this handler never grants. Failed logins are
// rate limited per source address.
package admin

import (
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"time"
)

// Prefix is the path the page and its endpoints are served under.
const Prefix = "/admin/"

// The endpoints of the page, under Prefix. Each answers JSON, errors as
// the API's: {"error": CODE, "reason": TEXT}.
const (
	// loginPath takes {"key": API_KEY} and answers {"app": APPKEY} with
	// the session cookie.
	loginPath = Prefix + "login"
	// logoutPath ends the session.
	logoutPath = Prefix + "logout"
	// statusPath answers the session's app and the edge's readiness.
	statusPath = Prefix + "status"
	// apiPath + METHOD is the server API's METHOD, called with the
	// session's key.
	apiPath = Prefix + "api/"
)

// cookieName is the session cookie's.
const cookieName = "sluice_admin"

// Defaults of Options.
const (
	DefaultIdleTimeout       = 30 * time.Minute
	DefaultMaxAge            = 12 * time.Hour
	DefaultMaxSessions       = 1000
	DefaultFailuresPerMinute = 30
)

// maxLoginBytes bounds a login's body: a key and some JSON.
const maxLoginBytes = 4 << 10

// API is the server API the page uses: edge/api's Handler.
type API interface {
	// ServeHTTP serves /api/METHOD, authenticated by X-API-Key.
	http.Handler
	// Authenticate returns the appkey an API key names.
	Authenticate(key string) (appKey string, ok bool)
}

// Options configure a Handler; nil and zero fields mean the defaults.
type Options struct {
	// Ready is the edge's readiness, as /readyz answers it; default
	// always ready.
	Ready func() (ok bool, why string)
	// FailuresPerMinute bounds the failed logins from one source address
	// (a token bucket of that burst, taken from by failures only); past
	// it logins are refused with 429 before the key is checked. Default
	// DefaultFailuresPerMinute, as limits.auth_failures_per_minute.
	FailuresPerMinute int
	// IdleTimeout ends a session unused this long; default 30 minutes.
	IdleTimeout time.Duration
	// MaxAge ends a session this long after its login; default 12 hours.
	MaxAge time.Duration
	// MaxSessions bounds the sessions held; past it a login ends the
	// oldest. Default 1000.
	MaxSessions int
	// Now is the clock of sessions and of the login limit; default
	// time.Now.
	Now func() time.Time
	// Logger receives logins and refused logins; default slog.Default().
	Logger *slog.Logger
}

// Handler serves the page under Prefix. It is safe for concurrent use.
type Handler struct {
	api      API
	ready    func() (bool, string)
	sessions *sessions
	failures *failures
	csrf     *http.CrossOriginProtection
	log      *slog.Logger
	mux      *http.ServeMux
}

//go:embed page
var files embed.FS

// New returns the page of api.
func New(api API, opts *Options) *Handler {
	if opts == nil {
		opts = &Options{}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	ready := opts.Ready
	if ready == nil {
		ready = func() (bool, string) { return true, "" }
	}
	h := &Handler{
		api:   api,
		ready: ready,
		sessions: newSessions(cmp.Or(opts.IdleTimeout, DefaultIdleTimeout), cmp.Or(opts.MaxAge, DefaultMaxAge),
			cmp.Or(opts.MaxSessions, DefaultMaxSessions), now),
		failures: newFailures(cmp.Or(opts.FailuresPerMinute, DefaultFailuresPerMinute), now),
		csrf:     http.NewCrossOriginProtection(),
		log:      cmp.Or(opts.Logger, slog.Default()),
		mux:      http.NewServeMux(),
	}
	h.mux.Handle("GET "+Prefix+"{$}", file("index.html", "text/html; charset=utf-8"))
	h.mux.Handle("GET "+Prefix+"admin.js", file("admin.js", "text/javascript; charset=utf-8"))
	h.mux.Handle("GET "+Prefix+"admin.css", file("admin.css", "text/css; charset=utf-8"))
	h.mux.HandleFunc("POST "+loginPath, h.post(h.login))
	h.mux.HandleFunc("POST "+logoutPath, h.post(h.logout))
	h.mux.HandleFunc("GET "+statusPath, h.status)
	h.mux.HandleFunc("POST "+apiPath+"{method}", h.post(h.callAPI))
	return h
}

// contentSecurity lets the page run its own files only: no inline script,
// no other origin, no framing (clickjacking).
const contentSecurity = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; " +
	"img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP serves the page, its files and its endpoints, each answer
// uncached and unframeable.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurity)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Opener-Policy", "same-origin")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	h.mux.ServeHTTP(w, r)
}

// file serves an embedded file of page/.
func file(name, ctype string) http.Handler {
	b, err := files.ReadFile("page/" + name)
	if err != nil {
		panic("admin: " + name + " is not embedded: " + err.Error()) // the build embeds it
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ctype)
		w.Write(b)
	})
}

// post refuses a POST that a page of another origin could have sent: a
// cross-origin one (by Sec-Fetch-Site, or Origin against Host), or one
// not of JSON, the only type that needs a CORS preflight to be sent
// cross-origin.
func (h *Handler) post(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h.csrf.Check(r); err != nil {
			writeError(w, http.StatusForbidden, "cross_origin_refused",
				"the admin page's requests come from its own origin; this one came from another")
			return
		}
		if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send Content-Type: application/json")
			return
		}
		next(w, r)
	}
}

// login opens a session for an API key.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	peer := peerOf(r.RemoteAddr)
	if wait := h.failures.wait(peer); wait > 0 {
		secs := int((wait + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeError(w, http.StatusTooManyRequests, "too_many_requests",
			"too many failed logins from your address; try again in "+strconv.Itoa(secs)+" s")
		return
	}
	var req struct {
		Key string `json:"key"`
	}
	if err := decodeJSON(w, r, &req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_format", "send {\"key\": \"API_KEY\"}: "+err.Error())
		return
	}
	appKey, ok := h.api.Authenticate(req.Key)
	if !ok {
		h.failures.failed(peer)
		h.log.Info("admin: login refused", "remote", r.RemoteAddr)
		writeError(w, http.StatusUnauthorized, "authentication_failed",
			"that is not an API key of any app on this edge (api_keys in its configuration)")
		return
	}
	if c, err := r.Cookie(cookieName); err == nil {
		h.sessions.end(c.Value) // a login replaces the session it came with
	}
	token := h.sessions.create(appKey, req.Key)
	http.SetCookie(w, h.cookie(r, token, 0))
	h.log.Info("admin: login", "remote", r.RemoteAddr, "appkey", appKey)
	writeJSON(w, http.StatusOK, map[string]string{"app": appKey})
}

// logout ends the request's session, if any, and clears its cookie.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(cookieName); err == nil {
		h.sessions.end(c.Value)
	}
	http.SetCookie(w, h.cookie(r, "", -1))
	w.WriteHeader(http.StatusNoContent)
}

// cookie is the session cookie: a browser session's (no Max-Age), or one
// that clears it (maxAge -1).
func (h *Handler) cookie(r *http.Request, token string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: cookieName, Value: token, Path: Prefix, MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
}

// session returns the request's session, or answers 401.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (session, bool) {
	if c, err := r.Cookie(cookieName); err == nil {
		if s, ok := h.sessions.get(c.Value); ok {
			return s, true
		}
	}
	writeError(w, http.StatusUnauthorized, "authentication_failed", "log in first (or again: the session ended)")
	return session{}, false
}

// status answers the session's app and the edge's readiness.
func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(w, r)
	if !ok {
		return
	}
	ready, why := h.ready()
	writeJSON(w, http.StatusOK, map[string]any{"app": s.appKey, "ready": ready, "reason": why})
}

// callAPI calls the server API's method with the session's key, and
// with nothing else the browser sent but the body: its own credentials
// and cookies stay out.
func (h *Handler) callAPI(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(w, r)
	if !ok {
		return
	}
	out := r.Clone(r.Context())
	out.URL.Path = "/api/" + r.PathValue("method")
	out.URL.RawPath = ""
	out.Header = http.Header{"Content-Type": {"application/json"}, "X-Api-Key": {s.apiKey}}
	h.api.ServeHTTP(w, out)
}

// decodeJSON decodes a small JSON body into v, refusing unknown fields.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxLoginBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("one JSON object, and nothing after it")
	}
	return nil
}

// writeError answers an error as the API does.
func writeError(w http.ResponseWriter, status int, code, reason string) {
	writeJSON(w, status, map[string]string{"error": code, "reason": reason})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v) // maps of strings and bools
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

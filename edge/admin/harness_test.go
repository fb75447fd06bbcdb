package admin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The keys of the fake API: two apps.
const (
	alphaKey = "alpha-key-0123456789"
	betaKey  = "beta-key-0123456789"
)

// fakeAPI stands for edge/api: it knows two keys and answers every call
// with what it was called with, so a test sees what the page's calls
// carry.
type fakeAPI struct {
	mu    sync.Mutex
	calls int
}

func (f *fakeAPI) Authenticate(key string) (string, bool) {
	switch key {
	case alphaKey:
		return "alpha", true
	case betaKey:
		return "beta", true
	}
	return "", false
}

// apiCall is what the fake API answers: what it saw.
type apiCall struct {
	Path    string              `json:"path"`
	Headers map[string][]string `json:"headers"`
	Body    string              `json:"body"`
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTeapot) // passed through as is
	json.NewEncoder(w).Encode(apiCall{Path: r.URL.Path, Headers: r.Header, Body: string(body)})
}

func (f *fakeAPI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// page is a Handler under test with its fake API and clock.
type page struct {
	t     *testing.T
	h     *Handler
	api   *fakeAPI
	clock *clock
}

func newPage(t *testing.T, opts *Options) *page {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	p := &page{t: t, api: &fakeAPI{}, clock: &clock{t: time.Unix(1_800_000_000, 0)}}
	opts.Now = p.clock.now
	p.h = New(p.api, opts)
	return p
}

// answer is a response: its status, headers, cookies and JSON body.
type answer struct {
	status  int
	header  http.Header
	cookies []*http.Cookie
	raw     string
}

// field returns a string field of the JSON body.
func (a answer) field(t *testing.T, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.raw), &m); err != nil {
		t.Fatalf("body %q: %v", a.raw, err)
	}
	s, _ := m[name].(string)
	return s
}

// refused checks a JSON error answer and returns its reason.
func (a answer) refused(t *testing.T, status int, code string) string {
	t.Helper()
	if a.status != status || a.field(t, "error") != code {
		t.Fatalf("answer %d %s, want %d %s", a.status, a.raw, status, code)
	}
	return a.field(t, "reason")
}

// req is a request of the page: its method, path, body and what to add.
type req struct {
	method, path, body string
	cookie             string // the session token, if any
	remote             string // default 192.0.2.1:1234
	header             map[string]string
}

// do serves r as the browser sends it: JSON, from the page's own origin.
func (p *page) do(r req) answer {
	p.t.Helper()
	return p.serve(p.request(r))
}

// request builds r as the browser sends it.
func (p *page) request(r req) *http.Request {
	hr := httptest.NewRequest(r.method, r.path, strings.NewReader(r.body))
	if r.method == http.MethodPost {
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Sec-Fetch-Site", "same-origin")
		hr.Header.Set("Origin", "http://"+hr.Host)
	}
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	if r.cookie != "" {
		hr.AddCookie(&http.Cookie{Name: cookieName, Value: r.cookie})
	}
	for k, v := range r.header {
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	return hr
}

// serve serves a request.
func (p *page) serve(hr *http.Request) answer {
	w := httptest.NewRecorder()
	p.h.ServeHTTP(w, hr)
	resp := w.Result()
	return answer{status: resp.StatusCode, header: resp.Header, cookies: resp.Cookies(), raw: w.Body.String()}
}

// status returns the status of GET status with token.
func (p *page) status(token string) int {
	p.t.Helper()
	return p.do(req{method: http.MethodGet, path: statusPath, cookie: token}).status
}

// login logs in with key and returns the session token.
func (p *page) login(key string) string {
	p.t.Helper()
	a := p.do(req{method: http.MethodPost, path: loginPath, body: `{"key":"` + key + `"}`})
	if a.status != http.StatusOK || len(a.cookies) != 1 {
		p.t.Fatalf("login: %d %s, cookies %v", a.status, a.raw, a.cookies)
	}
	return a.cookies[0].Value
}

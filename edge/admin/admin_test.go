package admin

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLogin: a key of no app is refused with a reason that says what to
// give and no cookie; a key names its app and opens a session whose
// cookie no script can read and no other site can send.
func TestLogin(t *testing.T) {
	p := newPage(t, nil)
	for _, tt := range []struct {
		name, body string
		status     int
		code       string
	}{
		{name: "wrong key", body: `{"key":"not-a-key-0123456789"}`, status: 401, code: "authentication_failed"},
		{name: "empty key", body: `{"key":""}`, status: 401, code: "authentication_failed"},
		{name: "no body", body: ``, status: 400, code: "invalid_format"},
		{name: "not JSON", body: `key=` + alphaKey, status: 400, code: "invalid_format"},
		{name: "unknown field", body: `{"key":"` + alphaKey + `","app":"beta"}`, status: 400, code: "invalid_format"},
		{name: "two objects", body: `{"key":"` + alphaKey + `"}{}`, status: 400, code: "invalid_format"},
	} {
		a := p.do(req{method: http.MethodPost, path: loginPath, body: tt.body})
		reason := a.refused(t, tt.status, tt.code)
		if len(a.cookies) != 0 {
			t.Errorf("%s: refused with a cookie %v", tt.name, a.cookies)
		}
		if tt.code == "authentication_failed" && !strings.Contains(reason, "not an API key") {
			t.Errorf("%s: reason %q does not say what was wrong", tt.name, reason)
		}
	}

	a := p.do(req{method: http.MethodPost, path: loginPath, body: `{"key":"` + betaKey + `"}`})
	if a.status != http.StatusOK || a.field(t, "app") != "beta" {
		t.Fatalf("login: %d %s", a.status, a.raw)
	}
	if len(a.cookies) != 1 {
		t.Fatalf("cookies %v", a.cookies)
	}
	c := a.cookies[0]
	if c.Name != cookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != Prefix ||
		c.MaxAge != 0 || !c.Expires.IsZero() || c.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/admin/, a browser session's, not Secure over HTTP", c)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`).MatchString(c.Value) || strings.Contains(c.Value, betaKey) {
		t.Errorf("cookie value %q: want 256 random bits, not the key", c.Value)
	}
	s := p.do(req{method: http.MethodGet, path: statusPath, cookie: c.Value})
	if s.status != http.StatusOK || s.field(t, "app") != "beta" {
		t.Fatalf("status with the session: %d %s", s.status, s.raw)
	}
}

// TestCookieSecureOverTLS: over TLS the cookie is Secure.
func TestCookieSecureOverTLS(t *testing.T) {
	p := newPage(t, nil)
	r := req{method: http.MethodPost, path: loginPath, body: `{"key":"` + alphaKey + `"}`}
	hr := p.request(r)
	hr.TLS = &tls.ConnectionState{}
	a := p.serve(hr)
	if a.status != http.StatusOK || len(a.cookies) != 1 || !a.cookies[0].Secure {
		t.Fatalf("login over TLS: %d, cookies %+v", a.status, a.cookies)
	}
}

// pageCalls are the server API methods the page calls.
var pageCalls = []string{"info", "channels", "history", "presence", "presence_stats", "publish", "disconnect", "unsubscribe"}

// TestSessionRequired: without a session, or with a token of none, every
// endpoint of the page is 401 and the API is never called.
func TestSessionRequired(t *testing.T) {
	p := newPage(t, nil)
	p.login(alphaKey) // a session exists, just not the caller's
	for _, token := range []string{"", "forged-token-of-no-session-0000000000000000", alphaKey} {
		p.do(req{method: http.MethodGet, path: statusPath, cookie: token}).refused(t, 401, "authentication_failed")
		for _, m := range append(pageCalls, "read", "broadcast") {
			a := p.do(req{method: http.MethodPost, path: apiPath + m, body: `{}`, cookie: token,
				header: map[string]string{"X-API-Key": alphaKey}})
			a.refused(t, 401, "authentication_failed")
		}
	}
	if n := p.api.count(); n != 0 {
		t.Fatalf("the API was called %d times without a session", n)
	}
}

// TestCallAPI: a call goes to /api/METHOD with the session's key, its
// body as sent, and none of the browser's own credentials; the API's
// answer comes back as it is.
func TestCallAPI(t *testing.T) {
	p := newPage(t, nil)
	token := p.login(alphaKey)
	for _, m := range pageCalls {
		body := `{"channel":"chat","n":"` + m + `"}`
		a := p.do(req{method: http.MethodPost, path: apiPath + m, body: body, cookie: token,
			header: map[string]string{"X-API-Key": betaKey, "Authorization": "apikey " + betaKey}})
		if a.status != http.StatusTeapot {
			t.Fatalf("%s: %d %s", m, a.status, a.raw)
		}
		var got apiCall
		if err := json.Unmarshal([]byte(a.raw), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{"Content-Type": {"application/json"}, "X-Api-Key": {alphaKey}}
		if got.Path != "/api/"+m || got.Body != body || len(got.Headers) != len(want) ||
			strings.Join(got.Headers["X-Api-Key"], ",") != alphaKey || got.Headers["Cookie"] != nil {
			t.Fatalf("%s reached the API as %+v; want path /api/%s, body %s, headers %v", m, got, m, body, want)
		}
	}
}

// TestCrossOrigin: a POST that another origin could have made is refused
// before anything else: cross-site, same-site (another port of the host:
// SameSite cookies do not tell ports apart), an Origin that is not the
// page's, or a body that is not JSON (a form's).
func TestCrossOrigin(t *testing.T) {
	p := newPage(t, nil)
	token := p.login(alphaKey)
	for _, path := range []string{loginPath, logoutPath, apiPath + "publish"} {
		for _, tt := range []struct {
			name   string
			header map[string]string
			status int
			code   string
		}{
			{"cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross_origin_refused"},
			{"same-site", map[string]string{"Sec-Fetch-Site": "same-site"}, 403, "cross_origin_refused"},
			{"other origin", map[string]string{"Sec-Fetch-Site": "", "Origin": "http://example.com:8080"}, 403, "cross_origin_refused"},
			{"form", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "unsupported_media_type"},
			{"text", map[string]string{"Content-Type": "text/plain"}, 415, "unsupported_media_type"},
			{"no type", map[string]string{"Content-Type": ""}, 415, "unsupported_media_type"},
		} {
			a := p.do(req{method: http.MethodPost, path: path, body: `{"key":"` + alphaKey + `"}`, cookie: token, header: tt.header})
			if a.status != tt.status || a.field(t, "error") != tt.code || len(a.cookies) != 0 {
				t.Errorf("%s %s: %d %s, cookies %v; want %d %s", path, tt.name, a.status, a.raw, a.cookies, tt.status, tt.code)
			}
		}
		if a := p.do(req{method: http.MethodGet, path: path, cookie: token}); a.status != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d, want 405", path, a.status)
		}
	}
	if n := p.api.count(); n != 0 {
		t.Fatalf("the API was called %d times", n)
	}
	// The session survived: no refused logout ended it.
	if a := p.do(req{method: http.MethodGet, path: statusPath, cookie: token}); a.status != 200 {
		t.Fatalf("status after the refusals: %d %s", a.status, a.raw)
	}
}

// TestLoginRateLimit: past FailuresPerMinute failed logins from one
// address, its logins are refused with 429 and Retry-After before the
// key is looked at, right key included; other addresses are not, a
// success takes nothing, and the bucket refills over the minute.
func TestLoginRateLimit(t *testing.T) {
	p := newPage(t, &Options{FailuresPerMinute: 3})
	const attacker, operator = "198.51.100.7:4000", "192.0.2.9:5000"
	login := func(remote, key string) answer {
		return p.do(req{method: http.MethodPost, path: loginPath, body: `{"key":"` + key + `"}`, remote: remote})
	}
	for range 5 {
		if a := login(operator, alphaKey); a.status != 200 {
			t.Fatalf("operator's login: %d %s", a.status, a.raw)
		}
	}
	for i := range 3 {
		login(attacker, "guess-"+string(rune('a'+i))).refused(t, 401, "authentication_failed")
	}
	a := login(attacker, alphaKey)
	reason := a.refused(t, 429, "too_many_requests")
	if a.header.Get("Retry-After") != "20" || !strings.Contains(reason, "try again in 20 s") {
		t.Fatalf("Retry-After %q, reason %q; want 20 s (a try per 20 s at 3 a minute)", a.header.Get("Retry-After"), reason)
	}
	login(operator, "guess-x").refused(t, 401, "authentication_failed")
	if a := login(operator, alphaKey); a.status != 200 {
		t.Fatalf("another address's login: %d %s", a.status, a.raw)
	}
	p.clock.add(19 * time.Second)
	if a := login(attacker, alphaKey); a.header.Get("Retry-After") != "1" {
		t.Fatalf("after 19 s: %d %s, Retry-After %q", a.status, a.raw, a.header.Get("Retry-After"))
	}
	p.clock.add(time.Second)
	if a := login(attacker, alphaKey); a.status != 200 {
		t.Fatalf("after 20 s: %d %s", a.status, a.raw)
	}
}

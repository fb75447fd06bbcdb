package admin

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLogout: logging out ends the session on the edge (the token no
// longer works, even replayed) and clears the cookie.
func TestLogout(t *testing.T) {
	p := newPage(t, nil)
	token := p.login(alphaKey)
	other := p.login(alphaKey)
	a := p.do(req{method: http.MethodPost, path: logoutPath, body: `{}`, cookie: token})
	if a.status != http.StatusNoContent || len(a.cookies) != 1 || a.cookies[0].MaxAge >= 0 || a.cookies[0].Value != "" {
		t.Fatalf("logout: %d, cookies %+v", a.status, a.cookies)
	}
	if s := p.status(token); s != 401 {
		t.Fatalf("the token after logout: %d", s)
	}
	if s := p.status(other); s != 200 {
		t.Fatalf("another session after the logout: %d", s)
	}
}

// TestLoginReplacesSession: a login from a browser that had a session
// ends it, so a token known before the login (fixation) is worth nothing.
func TestLoginReplacesSession(t *testing.T) {
	p := newPage(t, nil)
	old := p.login(alphaKey)
	a := p.do(req{method: http.MethodPost, path: loginPath, body: `{"key":"` + betaKey + `"}`, cookie: old})
	if a.status != 200 || len(a.cookies) != 1 || a.cookies[0].Value == old {
		t.Fatalf("login: %d, cookies %+v", a.status, a.cookies)
	}
	if s := p.status(old); s != 401 {
		t.Fatalf("the old token: %d", s)
	}
	if n := p.h.sessions.count(); n != 1 {
		t.Fatalf("%d sessions held, want 1", n)
	}
}

// TestSessionExpiry: a session ends after IdleTimeout unused, and after
// MaxAge however used.
func TestSessionExpiry(t *testing.T) {
	p := newPage(t, &Options{IdleTimeout: 10 * time.Minute, MaxAge: time.Hour})
	idle := p.login(alphaKey)
	busy := p.login(alphaKey)
	for range 5 {
		p.clock.add(9 * time.Minute)
		if s := p.status(busy); s != 200 {
			t.Fatalf("a session used every 9 minutes: %d", s)
		}
	}
	if s := p.status(idle); s != 401 {
		t.Fatalf("a session unused for 45 minutes: %d", s)
	}
	p.clock.add(9 * time.Minute) // 54 minutes
	if s := p.status(busy); s != 200 {
		t.Fatalf("a session used every 9 minutes, at 54: %d", s)
	}
	p.clock.add(6 * time.Minute)
	if s := p.status(busy); s != 401 {
		t.Fatalf("a session an hour after its login: %d", s)
	}
	if n := p.h.sessions.count(); n != 0 {
		t.Fatalf("%d sessions held after both ended", n)
	}
}

// TestSessionBound: past MaxSessions, a login ends the oldest session;
// logins sweep the expired ones first.
func TestSessionBound(t *testing.T) {
	p := newPage(t, &Options{MaxSessions: 2, IdleTimeout: time.Minute})
	first := p.login(alphaKey)
	p.clock.add(time.Second)
	second := p.login(betaKey)
	p.clock.add(time.Second)
	third := p.login(alphaKey)
	if p.status(first) != 401 || p.status(second) != 200 || p.status(third) != 200 {
		t.Fatalf("sessions: first %d, second %d, third %d; want the first ended", p.status(first), p.status(second), p.status(third))
	}
	p.clock.add(time.Minute)
	p.login(alphaKey)
	if n := p.h.sessions.count(); n != 1 {
		t.Fatalf("%d sessions held, want the expired swept", n)
	}
}

// TestStatus: the session's app and the edge's readiness.
func TestStatus(t *testing.T) {
	ready, why := true, ""
	p := newPage(t, &Options{Ready: func() (bool, string) { return ready, why }})
	token := p.login(betaKey)
	a := p.do(req{method: http.MethodGet, path: statusPath, cookie: token})
	if a.status != 200 || a.raw != `{"app":"beta","ready":true,"reason":""}`+"\n" {
		t.Fatalf("status: %d %s", a.status, a.raw)
	}
	ready, why = false, "draining"
	a = p.do(req{method: http.MethodGet, path: statusPath, cookie: token})
	if a.status != 200 || a.raw != `{"app":"beta","ready":false,"reason":"draining"}`+"\n" {
		t.Fatalf("status: %d %s", a.status, a.raw)
	}
}

// TestPageFiles: the page and its files are served, every answer with
// headers that keep it from being framed, cached or sniffed, under a
// policy that runs the page's own files only; and the page's script
// never parses text as HTML, so nothing the edge holds (channel names,
// messages, user ids) can run as script.
func TestPageFiles(t *testing.T) {
	p := newPage(t, nil)
	for path, ctype := range map[string]string{
		Prefix: "text/html", Prefix + "admin.js": "text/javascript", Prefix + "admin.css": "text/css",
		statusPath: "application/json", Prefix + "nothing": "text/plain",
	} {
		a := p.do(req{method: http.MethodGet, path: path})
		if !strings.HasPrefix(a.header.Get("Content-Type"), ctype) {
			t.Errorf("%s: Content-Type %q, want %s", path, a.header.Get("Content-Type"), ctype)
		}
		for h, want := range map[string]string{"Content-Security-Policy": contentSecurity, "X-Frame-Options": "DENY",
			"X-Content-Type-Options": "nosniff", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer"} {
			if got := a.header.Get(h); got != want {
				t.Errorf("%s: %s %q, want %q", path, h, got, want)
			}
		}
	}
	html, _ := files.ReadFile("page/index.html")
	js, _ := files.ReadFile("page/admin.js")
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(string(html), -1) {
		if !strings.Contains(tag, " src=") {
			t.Errorf("index.html has inline script (%s), which the policy refuses", tag)
		}
	}
	if m := regexp.MustCompile(`\son[a-z]+=`).FindString(string(html)); m != "" {
		t.Errorf("index.html has an inline handler (%s), which the policy refuses", m)
	}
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(string(js), sink) {
			t.Errorf("admin.js uses %s: set text with textContent", sink)
		}
	}
}

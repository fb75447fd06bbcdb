package edgecmd

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
)

// adminPageYAML is an edge with an admin listener and an app with an API
// key, the key an operator logs in to the admin page with.
const adminPageYAML = `admin: {listen: 127.0.0.1:0}
apps:
  - appkey: ops
    api_keys: ["ops-backend-key-0123456789"]
    roles:
      default: {publish: ["*"], subscribe: ["*"], presence: ["*"]}
`

// adminClient posts to the admin page's endpoints as the page does, with
// a cookie jar for the session.
type adminClient struct {
	t    *testing.T
	base string // http://ADMIN
	c    *http.Client
}

func (a *adminClient) post(path, body string) (int, string) {
	a.t.Helper()
	req, err := http.NewRequest(http.MethodPost, a.base+path, strings.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEdgeAdminPage: the admin listener serves the page at /admin/ (its
// root leads there), a login with the app's API key opens a session, and
// every server API call the page makes needs that session; the main
// listener serves none of it.
func TestEdgeAdminPage(t *testing.T) {
	e := startTestEdge(t, adminPageYAML)
	if !strings.Contains(e.out.String(), "http://"+e.admin+"/admin/") {
		t.Errorf("the banner does not name the admin page:\n%s", e.out.String())
	}
	if code, body := httpGet(t, "http://"+e.admin+"/"); code != 200 || !strings.Contains(body, "<title>Sluice admin</title>") {
		t.Fatalf("GET / on the admin listener (following its redirect): %d", code)
	}
	if code, _ := httpGet(t, "http://"+e.addr+"/admin/"); code != 404 {
		t.Fatalf("GET /admin/ on the main listener: %d, want 404", code)
	}
	jar, _ := cookiejar.New(nil)
	a := &adminClient{t: t, base: "http://" + e.admin, c: &http.Client{Jar: jar}}
	calls := map[string]string{
		"info":           `{}`,
		"channels":       `{"prefix":"room"}`,
		"publish":        `{"channel":"room.1","message":{"text":"hi"}}`,
		"history":        `{"channel":"room.1","count":10}`,
		"presence":       `{"channel":"room.1"}`,
		"presence_stats": `{"channel":"room.1"}`,
		"disconnect":     `{"user":"alice","reason":"test"}`,
		"unsubscribe":    `{"user":"alice","channel":"room.1"}`,
	}
	for m, body := range calls {
		if code, got := a.post("/admin/api/"+m, body); code != 401 || !strings.Contains(got, "authentication_failed") {
			t.Errorf("%s before the login: %d %s", m, code, got)
		}
	}
	if code, got := a.post("/admin/login", `{"key":"not-the-key-0123456789"}`); code != 401 || !strings.Contains(got, "not an API key") {
		t.Fatalf("login with a wrong key: %d %s", code, got)
	}
	if code, got := a.post("/admin/login", `{"key":"ops-backend-key-0123456789"}`); code != 200 || got != `{"app":"ops"}`+"\n" {
		t.Fatalf("login: %d %s", code, got)
	}
	for _, m := range []string{"info", "channels", "publish", "history", "presence", "presence_stats", "disconnect", "unsubscribe"} {
		if code, got := a.post("/admin/api/"+m, calls[m]); code != 200 {
			t.Errorf("%s after the login: %d %s", m, code, got)
		}
	}
	if _, got := a.post("/admin/api/history", calls["history"]); !strings.Contains(got, `"message":{"text":"hi"}`) {
		t.Errorf("history after the publish: %s", got)
	}
	if code, _ := a.post("/admin/logout", `{}`); code != http.StatusNoContent {
		t.Fatalf("logout: %d", code)
	}
	if code, _ := a.post("/admin/api/info", `{}`); code != 401 {
		t.Fatalf("info after the logout: %d", code)
	}
}

package edgecmd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestWeakKey(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		key, want string // want: part of the reason, "" for not weak
	}{
		{key: "", want: ""},
		{key: "replace-with-a-random-secret-of-at-least-32-bytes", want: `placeholder (it contains "replace")`},
		{key: "CHANGEME-CHANGEME-CHANGEME-CHANGEME", want: `"change"`},
		{key: "my-jwt-secret-for-the-example-app!!", want: "placeholder"},
		{key: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", want: "only 1 distinct characters"},
		{key: "12341234123412341234123412341234", want: "only 4 distinct"},
		{key: "0123456789012345678901234567890123456789", want: `it repeats "0123456789"`},
		{key: "q3Xv9+LmZ0rT8wBn2yKc4HdE6sJp1uAf7gQo5iWzR0M=", want: ""}, // 32 random bytes in base64
		{key: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", want: ""},
	} {
		got := weakKey(tt.key)
		if (got == "") != (tt.want == "") || !strings.Contains(got, tt.want) {
			t.Errorf("weakKey(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
}

func TestWebConfig(t *testing.T) {
	t.Parallel()
	c, err := parseConfig([]byte("web: {demo: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Web.demo() {
		t.Error("web.demo: false leaves the demo on")
	}
	if !DefaultConfig().Web.demo() {
		t.Error("the demo is off by default")
	}
	if _, err := parseConfig([]byte("web: {demos: false}\n")); err == nil || !strings.Contains(err.Error(), "demos") {
		t.Errorf("unknown key web.demos: err %v, want one naming it", err)
	}
	c, err = LoadConfig("../../../deploy/edge.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Web.demo() {
		t.Error("deploy/edge.yaml serves the demo pages")
	}
}

func TestBannerDescribesTheEdge(t *testing.T) {
	t.Parallel()
	t.Run("default", func(t *testing.T) {
		t.Parallel()
		e := startTestEdge(t, "")
		base := "http://" + e.addr + "/"
		if _, err := e.stop(t); err != nil {
			t.Fatal(err)
		}
		out := e.out.String()
		if !strings.Contains(out, "  demo:   "+base+"\n") || !strings.Contains(out, "Try:  sluice sub chat.lobby ") ||
			!strings.Contains(out, "  api key: "+DemoAPIKey+" ") {
			t.Errorf("banner of the default edge:\n%s", out)
		}
		// On loopback, the development key is no warning.
		if logs := e.logs.String(); strings.Contains(logs, "level=WARN") {
			t.Errorf("logs of the default edge:\n%s", logs)
		}
	})
	t.Run("program", func(t *testing.T) {
		t.Parallel()
		e := startEdgeOpts(t, "", &Options{Program: "./bin/sluice"})
		if _, err := e.stop(t); err != nil {
			t.Fatal(err)
		}
		if out := e.out.String(); !strings.Contains(out, "Try:  ./bin/sluice sub chat.lobby ") || !strings.Contains(out, "   ./bin/sluice pub chat.lobby ") {
			t.Errorf("banner of an edge run as ./bin/sluice:\n%s", out)
		}
	})
	t.Run("json logs", func(t *testing.T) {
		t.Parallel()
		e := startTestEdge(t, "log: {format: json}\n")
		if _, err := e.stop(t); err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSpace(e.out.String())
		if strings.Contains(out, "\n") {
			t.Fatalf("the banner with JSON logs is more than one line:\n%s", out)
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(out), &rec); err != nil {
			t.Fatalf("the banner with JSON logs is no JSON object: %v\n%s", err, out)
		}
		if rec["url"] != e.url || rec["msg"] != "sluice edge serving RTM v2" || rec["try"] == nil || rec["api_key"] != DemoAPIKey {
			t.Errorf("the banner's record %v: want the msg, url %s and the commands to try", rec, e.url)
		}
	})
	t.Run("configured", func(t *testing.T) {
		t.Parallel()
		e := startTestEdge(t, "apps:\n  - appkey: my-app\n    api_keys: [my-own-secret-api-key-0123]\n")
		base := "http://" + e.addr + "/"
		if _, err := e.stop(t); err != nil {
			t.Fatal(err)
		}
		out := e.out.String()
		// An app's own API keys are secrets: never in the banner.
		if !strings.Contains(out, "  demo:   "+base+"?appkey=my-app\n") || strings.Contains(out, "Try:") || !strings.Contains(out, "  appkey: my-app\n") ||
			strings.Contains(out, "api key") || strings.Contains(out, "my-own-secret") {
			t.Errorf("banner of an edge serving my-app:\n%s", out)
		}
	})
	t.Run("no demo", func(t *testing.T) {
		t.Parallel()
		e := startTestEdge(t, "web: {demo: false}\n")
		base := "http://" + e.addr + "/"
		for path, want := range map[string]int{"": http.StatusNotFound, "chat.html": http.StatusNotFound, "sluice.js": http.StatusOK, "sluice.wasm": http.StatusOK} {
			if code, _ := httpGet(t, base+path); code != want {
				t.Errorf("GET /%s: %d, want %d", path, code, want)
			}
		}
		if _, err := e.stop(t); err != nil {
			t.Fatal(err)
		}
		if out := e.out.String(); strings.Contains(out, "demo:") {
			t.Errorf("banner of an edge without the demo:\n%s", out)
		}
	})
	t.Run("weak key warned", func(t *testing.T) {
		t.Parallel()
		e := startTestEdge(t, "apps:\n  - appkey: my-app\n    jwt_key: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"\n")
		if _, err := e.stop(t); err != nil {
			t.Fatal(err)
		}
		if logs := e.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "apps[0].jwt_key: it has only 1 distinct characters") {
			t.Errorf("logs of an edge with a weak jwt_key:\n%s", logs)
		}
	})
}

// TestDevelopmentAPIKeyWarned: the demo app's development API key is
// public, so an edge serving the server API beyond loopback (the main
// listener or the admin one) warns of it, and one on loopback does not.
func TestDevelopmentAPIKeyWarned(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	for listen, warned := range map[string]bool{"127.0.0.1:8080": false, "[::1]:8080": false, "localhost:8080": false,
		":8080": true, "0.0.0.0:8080": true, "192.0.2.1:8080": true} {
		c.Listen = listen
		ws := strings.Join(c.Warnings(), "\n")
		if got := strings.Contains(ws, `apps[0] ("demo") has the development API key`); got != warned {
			t.Errorf("listen %s: warnings %q, want the development key's: %v", listen, ws, warned)
		}
	}
	c.Listen, c.Admin.Listen = "127.0.0.1:8080", ":9090" // the admin listener serves the API too
	if ws := c.Warnings(); len(ws) != 1 || !strings.Contains(ws[0], "[:9090]") {
		t.Errorf("admin listen :9090: warnings %q, want the development key's", ws)
	}
}

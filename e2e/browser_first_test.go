package e2e

// Time to first message in Chromium, cold and warm, on loopback: a page of
// another origin with docs/browser.md's preload snippet imports sluice.js
// from the edge, loads sluice.wasm, connects, subscribes to a channel with
// one message and notes performance.now() (from navigation) at each step. Printed, not
// asserted (it depends on the machine and its load); run it alone with
// `go test -run '^TestBrowserFirstMessage$' -count=5 -v ./e2e/`.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/doctext"
)

// firstMessagePage is the page's script, after the snippet.
const firstMessagePage = `<script type="module">
import { Sluice, load } from "EDGE/sluice.js";
const marks = { script: performance.now(), sockets: [] };
window.marks = marks;
// Notes when each WebSocket opens: the client's one, while sluice.wasm loads.
globalThis.WebSocket = class extends WebSocket {
  constructor(...args) {
    super(...args);
    marks.sockets.push(performance.now());
  }
};
load().then(() => {
  marks.loaded = performance.now();
});
const client = await Sluice.connect("WS", { appkey: "APPKEY" });
marks.connected = performance.now();
client.subscribe("open.first", { history: { count: 1 } }, () => {
  marks.first ??= performance.now();
  // Where the time went: the page's HTML, and each fetch of sluice.wasm.
  marks.html = performance.getEntriesByType("navigation")[0].responseEnd;
  marks.wasm = performance.getEntriesByType("resource")
    .filter((r) => /sluice[.][^/]*wasm$/.test(r.name))
    .map((r) => ({ name: r.name, start: r.startTime, end: r.responseEnd }));
});
</script>
`

// preloadSnippet is docs/browser.md's snippet for loading the client early.
func preloadSnippet(t *testing.T) string {
	t.Helper()
	return doctext.Block(t, "docs/browser.md", "**Loading early.**", "html")
}

// countingProxy forwards to the edge and notes the paths asked and the
// statuses answered, as "GET /path 200"; its fault, if any, breaks the
// plain /sluice.wasm.
type countingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCountingProxy(t *testing.T, edgeHTTP string, fault wasmFault) *countingProxy {
	t.Helper()
	target, err := url.Parse(edgeHTTP)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	cp := &countingProxy{}
	rp.ModifyResponse = func(resp *http.Response) error {
		if fault == wasmWrongType && resp.Request.URL.Path == "/sluice.wasm" {
			resp.Header.Set("Content-Type", "application/octet-stream")
		}
		cp.note(resp.Request, resp.Status[:3])
		return nil
	}
	cp.Server = httptest.NewServer(breakWasm(fault, cp, rp))
	t.Cleanup(cp.Close)
	return cp
}

// note records that r was answered with status.
func (cp *countingProxy) note(r *http.Request, status string) {
	cp.mu.Lock()
	cp.seen = append(cp.seen, r.Method+" "+r.URL.Path+" "+status)
	cp.mu.Unlock()
}

// take returns what was asked since the last take.
func (cp *countingProxy) take() []string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	s := cp.seen
	cp.seen = nil
	return s
}

// TestBrowserFirstMessage measures three cold visits, each in a browser
// context of its own, and a warm visit after each. It checks what makes a
// warm visit fast: the browser asks the edge about sluice.js alone (a 304)
// and takes sluice.wasm and wasm_exec.js, under their hashed names, from
// its cache.
func TestBrowserFirstMessage(t *testing.T) {
	b := startChrome(t)
	e := startBrowserEdge(t)
	pub := browserPublisher(t, e)
	if _, err := pub.Publish(ctxFor(t), "open.first", map[string]any{"hello": "browser"}); err != nil {
		t.Fatal(err)
	}
	edge := newCountingProxy(t, "http"+strings.TrimPrefix(e.url, "ws"), wasmIntact)
	s := firstMessageSite(t, e, edge.URL)
	for round := range 3 {
		p := b.newTab(t, "ws"+strings.TrimPrefix(s.URL, "http"))
		edge.take()
		cold := visit(p, "/?cold")
		coldAsked := edge.take()
		warm := visit(p, "/?warm")
		warmAsked := edge.take()
		t.Logf("round %d (load average %s), ms from navigation: cold %s; warm %s",
			round+1, loadAverage(), cold, warm)
		checkFirstVisits(t, round+1, cold, warm, coldAsked, warmAsked)
	}
}

// firstMessageSite serves, on an origin of its own, the page with the
// preload snippet that loads the client from edgeHTTP (the edge e, or a
// proxy to it) and connects to e.
func firstMessageSite(t *testing.T, e *cmdEdge, edgeHTTP string) *site {
	t.Helper()
	snippet := strings.ReplaceAll(preloadSnippet(t), "http://127.0.0.1:8080", edgeHTTP)
	page := strings.NewReplacer("EDGE", edgeHTTP, "WS", e.url, "APPKEY", browserAppkey).Replace(firstMessagePage)
	root := t.TempDir()
	html := "<!doctype html><meta charset=utf-8><title>first message</title><link rel=icon href=\"data:,\">\n" + snippet + page
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	return serveSite(t, root)
}

// checkFirstVisits checks a cold and a warm visit: each fetched
// sluice.wasm once, by the plain name the page preloads (load() took the
// preloaded response over rather than fetching the hashed name); the
// cold visit from the edge, the warm one from the HTTP cache, which asked
// the edge about sluice.js and sluice.wasm alone (304s); and the client's
// WebSocket was made once, while sluice.wasm loaded.
func checkFirstVisits(t *testing.T, round int, cold, warm marks, coldAsked, warmAsked []string) {
	t.Helper()
	if n := countFunc(coldAsked, func(r string) bool { return strings.HasSuffix(r, ".wasm 200") }); n != 1 || !slices.Contains(coldAsked, "GET /sluice.wasm 200") {
		t.Errorf("round %d: the cold visit asked %q: want the preloaded sluice.wasm once", round, coldAsked)
	}
	for _, m := range []marks{cold, warm} {
		if len(m.Wasm) != 1 || !strings.HasSuffix(m.Wasm[0].Name, "/sluice.wasm") {
			t.Errorf("round %d: the page fetched sluice.wasm as %+v: want once, the preloaded name", round, m.Wasm)
		}
		if len(m.Sockets) != 1 || m.Sockets[0] > m.Loaded {
			t.Errorf("round %d: WebSockets made at %v ms, sluice.wasm started at %.0f: want one, made before (connect opens it while sluice.wasm loads, and the client takes it)",
				round, m.Sockets, m.Loaded)
		}
	}
	asked := slices.Sorted(slices.Values(warmAsked))
	if !slices.Equal(asked, []string{"GET /sluice.js 304", "GET /sluice.wasm 304"}) {
		t.Errorf("round %d: the warm visit asked %q, want revalidations of sluice.js and sluice.wasm alone", round, warmAsked)
	}
}

// countFunc counts the elements of s that f accepts.
func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// marks are the page's times, in ms from navigation: its script ran,
// sluice.wasm was loaded and started, the client connected, the first
// message came; and when the page made each WebSocket.
type marks struct {
	Script, Loaded, Connected, First float64
	Sockets                          []float64 // when each WebSocket was made
	HTML                             float64   // the page's HTML received
	Wasm                             []fetched // each fetch of sluice.wasm
}

// fetched is a resource's fetch, from the page's resource timing.
type fetched struct {
	Name       string
	Start, End float64
}

func (m marks) String() string {
	wasm := ""
	for _, f := range m.Wasm {
		wasm += fmt.Sprintf(", sluice.wasm fetched %.0f-%.0f", f.Start, f.End)
	}
	return fmt.Sprintf("first message %.0f (html %.0f, script %.0f%s, sluice.wasm started %.0f, connected %.0f)",
		m.First, m.HTML, m.Script, wasm, m.Loaded, m.Connected)
}

// visit opens the page and returns its marks once the first message came.
func visit(p *tab, path string) marks {
	p.open(path)
	p.waitJS("the first message", "window.marks?.first !== undefined")
	return evalJS[marks](p, "window.marks")
}

// loadAverage is the machine's 1, 5 and 15 minute load, as /proc/loadavg
// says.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

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
});
</script>
`

// preloadSnippet is docs/browser.md's snippet for loading the client early.
func preloadSnippet(t *testing.T) string {
	t.Helper()
	return doctext.Block(t, "docs/browser.md", "**Loading early.**", "html")
}

// countingProxy forwards to the edge and notes the paths asked and the
// statuses answered, as "GET /path 200".
type countingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newCountingProxy(t *testing.T, edgeHTTP string) *countingProxy {
	t.Helper()
	target, err := url.Parse(edgeHTTP)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	cp := &countingProxy{}
	rp.ModifyResponse = func(resp *http.Response) error {
		cp.mu.Lock()
		cp.seen = append(cp.seen, resp.Request.Method+" "+resp.Request.URL.Path+" "+resp.Status[:3])
		cp.mu.Unlock()
		return nil
	}
	cp.Server = httptest.NewServer(rp)
	t.Cleanup(cp.Close)
	return cp
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
	edge := newCountingProxy(t, "http"+strings.TrimPrefix(e.url, "ws"))
	snippet := strings.ReplaceAll(preloadSnippet(t), "http://127.0.0.1:8080", edge.URL)
	page := strings.NewReplacer("EDGE", edge.URL, "WS", e.url, "APPKEY", browserAppkey).Replace(firstMessagePage)
	root := t.TempDir()
	html := "<!doctype html><meta charset=utf-8><title>first message</title><link rel=icon href=\"data:,\">\n" + snippet + page
	if err := os.WriteFile(filepath.Join(root, "index.html"), []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveSite(t, root)
	for round := range 3 {
		p := b.newTab(t, "ws"+strings.TrimPrefix(s.URL, "http"))
		edge.take()
		cold := visit(p, "/?cold")
		coldAsked := edge.take()
		warm := visit(p, "/?warm")
		warmAsked := edge.take()
		t.Logf("round %d (load average %s), ms from navigation: cold %s; warm %s",
			round+1, loadAverage(), cold, warm)
		if !slices.ContainsFunc(coldAsked, func(r string) bool { return strings.HasSuffix(r, ".wasm 200") }) {
			t.Errorf("round %d: the cold visit asked %q, no hashed sluice.wasm", round+1, coldAsked)
		}
		for _, m := range []marks{cold, warm} {
			if len(m.Sockets) != 1 || m.Sockets[0] > m.Loaded {
				t.Errorf("round %d: WebSockets made at %v ms, sluice.wasm started at %.0f: want one, made before (connect opens it while sluice.wasm loads, and the client takes it)",
					round+1, m.Sockets, m.Loaded)
			}
		}
		if !slices.Equal(warmAsked, []string{"GET /sluice.js 304"}) {
			t.Errorf("round %d: the warm visit asked %q, want a revalidation of sluice.js alone", round+1, warmAsked)
		}
	}
}

// marks are the page's times, in ms from navigation: its script ran,
// sluice.wasm was loaded and started, the client connected, the first
// message came; and when the page made each WebSocket.
type marks struct {
	Script, Loaded, Connected, First float64
	Sockets                          []float64 // when each WebSocket was made
}

func (m marks) String() string {
	return fmt.Sprintf("first message %.0f (script %.0f, sluice.wasm started %.0f, connected %.0f)",
		m.First, m.Script, m.Loaded, m.Connected)
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

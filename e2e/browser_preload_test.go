package e2e

// docs/browser.md's preload snippet when the preloaded sluice.wasm cannot
// be used: load() falls back to fetching the hashed name of its own
// build, as without the snippet, and the page connects.

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// wasmFault is what a countingProxy does to the plain /sluice.wasm, the
// name the page preloads; the hashed name load() falls back to passes.
type wasmFault string

const (
	wasmIntact wasmFault = ""
	// wasmNotFound answers 404 as the edge does for a file it lacks (no
	// CORS headers: a page of another origin sees a failed fetch).
	wasmNotFound wasmFault = "404"
	// wasmWrongType passes the edge's answer with another Content-Type,
	// as a server without the application/wasm type: compileStreaming
	// refuses it.
	wasmWrongType wasmFault = "wrong type"
	// wasmDropped closes the connection without an answer: a network
	// error.
	wasmDropped wasmFault = "dropped"
)

// breakWasm serves next, but for the plain /sluice.wasm under a fault
// that answers it itself (wasmNotFound, wasmDropped), noted in cp.
func breakWasm(fault wasmFault, cp *countingProxy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sluice.wasm" {
			next.ServeHTTP(w, r)
			return
		}
		switch fault {
		case wasmNotFound:
			cp.note(r, "404")
			http.NotFound(w, r)
		case wasmDropped:
			cp.note(r, "dropped")
			// http.ErrAbortHandler closes the connection without a
			// response, and the server does not log it.
			panic(http.ErrAbortHandler)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// hashedWasm is how a countingProxy notes a fetch of sluice.wasm by its
// hashed name that was answered.
var hashedWasm = regexp.MustCompile(`^GET /sluice\.[0-9a-f]{16}\.wasm 200$`)

// TestBrowserPreloadFallback: a page with the preload snippet whose
// preloaded sluice.wasm cannot be used (404, a network error) still
// connects and gets its first message: load() fetches the hashed name of
// its build instead, once, and nothing is reported on the console but
// the browser's own report of the failed preload. One of another
// Content-Type, which streaming compilation refuses, is compiled from
// the bytes preloaded: no second download.
func TestBrowserPreloadFallback(t *testing.T) {
	b := startChrome(t)
	e := startBrowserEdge(t)
	pub := browserPublisher(t, e)
	if _, err := pub.Publish(ctxFor(t), "open.first", map[string]any{"hello": "browser"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		fault  wasmFault
		name   string
		asked  string // how the proxy notes the preload's answer
		hashed int    // fetches of the hashed name after it
	}{
		{fault: wasmNotFound, name: "NotFound", asked: "GET /sluice.wasm 404", hashed: 1},
		{fault: wasmWrongType, name: "WrongType", asked: "GET /sluice.wasm 200", hashed: 0},
		{fault: wasmDropped, name: "NetworkError", asked: "GET /sluice.wasm dropped", hashed: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			edge := newCountingProxy(t, "http"+strings.TrimPrefix(e.url, "ws"), tt.fault)
			s := firstMessageSite(t, e, edge.URL)
			p := b.newTab(t, "ws"+strings.TrimPrefix(s.URL, "http"))
			m := visit(p, "/")
			asked := edge.take()
			if !slices.Contains(asked, tt.asked) {
				t.Errorf("the edge was asked %q: want the preload (%s)", asked, tt.asked)
			}
			if n := countFunc(asked, hashedWasm.MatchString); n != tt.hashed {
				t.Errorf("the edge was asked %q: want sluice.wasm by its hashed name %d times after the preload (%s)", asked, tt.hashed, tt.fault)
			}
			if n := countFunc(m.Wasm, func(f fetched) bool { return !strings.HasSuffix(f.Name, "/sluice.wasm") }); n != tt.hashed {
				t.Errorf("the page fetched sluice.wasm as %+v: want the hashed name %d times", m.Wasm, tt.hashed)
			}
			for _, msg := range p.consoleErrorsBut(edge.URL + "/sluice.wasm") {
				t.Errorf("the page's console has an error: %q", msg)
			}
		})
	}
}

// consoleErrorsBut returns the errors and uncaught exceptions the page
// reported, but the browser's own reports of the resource at url.
func (p *tab) consoleErrorsBut(url string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []string
	for _, m := range p.console {
		if (m.Type == chromedp.ConsoleError || m.IsException()) && m.URL != url && !strings.Contains(m.Text, url) {
			errs = append(errs, m.String())
		}
	}
	return errs
}

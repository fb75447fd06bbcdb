package e2e

// The browser side of the browser tests: one headless Chromium per run,
// pages in browser contexts of their own (separate storage and cache), the
// console of each page recorded, and the harness (testdata/
// browser_harness.js) to drive sluice.js.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// chromiumPath is where `make test` installs Chromium (apt-get).
const chromiumPath = "/usr/bin/chromium"

// pageTimeout bounds each step in a page: loading sluice.wasm, connecting,
// waiting for messages. Generous, as the tests run with -race on small
// machines.
const pageTimeout = 60 * time.Second

// chrome is one headless Chromium shared by the tests of a run.
type chrome struct {
	ctx context.Context // the first tab's: it owns the browser process
}

// startChrome starts Chromium; it is stopped when the test ends.
func startChrome(t *testing.T) *chrome {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("the browser tests need Chromium at %s (`make test` installs it when run as root; or apt-get install chromium): %v", chromiumPath, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 860),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Pages of a test are never in front; their timers (which run
		// the Go scheduler's sleeps) must not be throttled.
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		allocCancel() // waits for the browser process to exit
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &chrome{ctx: ctx}
}

// tab is one page, in a browser context of its own.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string // the edge's http:// URL, ending in "/"
	name string // who uses the tab ("alice"), for failure messages; may be ""
	url  string // the page last opened, for failure messages

	mu      sync.Mutex
	console []chromedp.ConsoleMessage

	close func() // closes the tab and waits for its console to end; idempotent
}

// newTab opens a tab for an edge; it is closed when the test ends.
func (b *chrome) newTab(t *testing.T, edgeURL string) *tab {
	t.Helper()
	return openTab(t, b.ctx, edgeURL, chromedp.WithNewBrowserContext())
}

// sibling opens another tab in p's browser context (the same storage,
// cache and shared workers), which closes when the test ends or on close;
// closing p closes its siblings too.
func (p *tab) sibling(t *testing.T) *tab {
	t.Helper()
	return openTab(t, p.ctx, "ws"+strings.TrimPrefix(strings.TrimSuffix(p.base, "/"), "http"))
}

// openTab opens a tab of the browser of parent.
func openTab(t *testing.T, parent context.Context, edgeURL string, opts ...chromedp.ContextOption) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(parent, opts...)
	p := &tab{t: t, ctx: ctx, base: "http" + strings.TrimPrefix(edgeURL, "ws") + "/"}
	p.url = p.base
	messages := chromedp.Console(ctx) // opens the tab
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return // the tab is closing
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	p.close = func() {
		cancel()
		<-done
	}
	t.Cleanup(p.close)
	return p
}

// String names the tab in failure messages: whose it is, when two tabs
// open the same page, and the page.
func (p *tab) String() string {
	if p.name == "" {
		return p.url
	}
	return p.name + "'s tab (" + p.url + ")"
}

// run runs actions in the tab, failing the test on error.
func (p *tab) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.t.Fatalf("%s: %s: %v\n%s", p, what, err, p.consoleText())
	}
}

// open navigates to a path of the edge and waits for the page to load.
func (p *tab) open(path string) {
	p.t.Helper()
	p.url = p.base + strings.TrimPrefix(path, "/")
	p.run("open "+path, chromedp.Navigate(p.url))
}

// evalJS evaluates a JavaScript expression (awaiting a Promise) and decodes
// its JSON value into T.
func evalJS[T any](p *tab, expr string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: evaluate %s: %v\n%s", p, expr, err, p.consoleText())
	}
	return v
}

// waitJS polls a JavaScript expression until it is truthy.
func (p *tab) waitJS(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](expr,
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(pageTimeout)))
	if err != nil {
		p.t.Fatalf("%s: waiting for %s (%s): %v\n%s", p, what, expr, err, p.consoleText())
	}
}

// consoleText is the page's console so far, for failure messages.
func (p *tab) consoleText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "console of %s (%d messages):\n", p, len(p.console))
	for _, m := range p.console {
		fmt.Fprintf(&b, "  %s\n", m)
	}
	return b.String()
}

// consoleTexts returns the text of every console message so far.
func (p *tab) consoleTexts() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	texts := make([]string, len(p.console))
	for i, m := range p.console {
		texts[i] = m.Text
	}
	return texts
}

// consoleErrors returns the errors and uncaught exceptions the page
// reported.
func (p *tab) consoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []string
	for _, m := range p.console {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			errs = append(errs, m.String())
		}
	}
	return errs
}

// screenshot saves a PNG of the whole page in the test's artifact directory
// (kept with `go test -artifacts`) and returns its path.
func (p *tab) screenshot(name string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("%s: screenshot %s: %v", p, name, err)
	}
	path := filepath.Join(p.t.ArtifactDir(), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// harnessJS is testdata/browser_harness.js, read once.
var harnessJS = sync.OnceValues(func() ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", "browser_harness.js"))
})

// openHarness opens the edge's landing page and installs the harness.
func (p *tab) openHarness() {
	p.t.Helper()
	p.open("/")
	p.openHarnessHere()
}

// openHarnessHere installs the harness in the page p has now (one that
// loaded again, say).
func (p *tab) openHarnessHere() {
	p.t.Helper()
	js, err := harnessJS()
	if err != nil {
		p.t.Fatal(err)
	}
	evalJS[bool](p, string(js)+"; true")
}

// jsError is an error as the harness reports it.
type jsError struct {
	Name           string  `json:"name"`
	Code           string  `json:"code"`
	Message        string  `json:"message"`
	Reason         string  `json:"reason"`
	SubscriptionID *string `json:"subscriptionId"`
}

// jsOutcome is the result of a harness call.
type jsOutcome[T any] struct {
	OK    bool     `json:"ok"`
	Value T        `json:"value"`
	Error *jsError `json:"error"`
}

// harnessCall runs a harness function with JSON arguments.
func harnessCall[T any](p *tab, fn string, args ...any) jsOutcome[T] {
	p.t.Helper()
	enc := make([]string, len(args))
	for i, a := range args {
		b, err := json.Marshal(a)
		if err != nil {
			p.t.Fatal(err)
		}
		enc[i] = string(b)
	}
	return evalJS[jsOutcome[T]](p, fmt.Sprintf("harness.%s(%s)", fn, strings.Join(enc, ", ")))
}

// harnessMust returns the value of a harness call that has to succeed.
func harnessMust[T any](p *tab, fn string, args ...any) T {
	p.t.Helper()
	o := harnessCall[T](p, fn, args...)
	if !o.OK {
		p.t.Fatalf("harness.%s: %+v\n%s", fn, o.Error, p.consoleText())
	}
	return o.Value
}

// jsConnectOptions are sluice.js connect options for a test edge.
func jsConnectOptions(appkey string, extra map[string]any) map[string]any {
	o := map[string]any{"appkey": appkey, "minBackoff": 10, "maxBackoff": 200}
	for k, v := range extra {
		o[k] = v
	}
	return o
}

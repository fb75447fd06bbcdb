package e2e

// The demo pages the edge serves at /, driven through their own UI.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/wasm/client"
)

// httpStatus returns the status of a GET.
func httpStatus(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// startDemoEdge runs `sluice edge` as `make run` does, in this process:
// no configuration, app "demo".
func startDemoEdge(t *testing.T) *cmdEdge {
	t.Helper()
	e := startCmdEdge(t, "")
	requireWasm(t, e.url)
	return e
}

// chatTexts lists the texts shown in a chat page, oldest first.
const chatTexts = `[...document.querySelectorAll("#messages li .text")].map((e) => e.textContent)`

// chatOpen opens the chat page of a room as a user, and waits until it
// can send.
func chatOpen(t *testing.T, b *chrome, e *cmdEdge, room, user string) *tab {
	t.Helper()
	p := b.newTab(t, e.url)
	p.name = user
	p.open("/chat.html#" + room)
	p.run("wait for "+user+"'s chat to join",
		chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#name"), user),
	)
	return p
}

// chatSay types a message in the chat's box and presses Send.
func chatSay(p *tab, text string) {
	p.t.Helper()
	p.run("say "+text,
		chromedp.SendKeys(chromedp.CSS("#text"), text),
		chromedp.Click(chromedp.CSS("#send")),
	)
}

// chatWait waits until a chat page shows text.
func chatWait(p *tab, text string) {
	p.t.Helper()
	p.waitJS(fmt.Sprintf("%q on the page", text), fmt.Sprintf("%s.includes(%q)", chatTexts, text))
}

func testChatBothWays(t *testing.T, b *chrome) {
	e := startDemoEdge(t)
	room := fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	alice := chatOpen(t, b, e, room, "alice")
	bob := chatOpen(t, b, e, room, "bob")
	chatSay(alice, "hello bob, it's alice 👋")
	chatWait(bob, "hello bob, it's alice 👋")
	chatSay(bob, "hi alice! ünïcode works")
	// Bob's own line reaches his page as it reaches alice's: through his
	// subscription, which may deliver it after hers did. So both pages
	// are waited for before their lines are compared.
	chatWait(alice, "hi alice! ünïcode works")
	chatWait(bob, "hi alice! ünïcode works")
	// Each sees both lines, in the order they were said.
	for _, p := range []*tab{alice, bob} {
		got := evalJS[[]string](p, chatTexts)
		want := []string{"hello bob, it's alice 👋", "hi alice! ünïcode works"}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s shows %q, want %q", p, got, want)
		}
	}
	// Who said what: bob sees alice's line under her name.
	who := evalJS[[]string](bob, `[...document.querySelectorAll("#messages li .user")].map((e) => e.textContent)`)
	if strings.Join(who, ",") != "alice,bob" {
		t.Errorf("bob's page names %v, want alice then bob", who)
	}
	// And a Go client in the same room sees the page's messages.
	c := dial(t, e.url, client.Options{AppKey: "demo"})
	v, _, err := c.Read(ctxFor(t), "chat."+room)
	if m, ok := v.(map[string]any); err != nil || !ok || m["user"] != "bob" {
		t.Fatalf("read chat.%s = %v, %v; want bob's message", room, v, err)
	}
}

// seedDemo publishes a conversation for the chat to replay, and traffic
// for the dashboard.
func seedDemo(t *testing.T, e *cmdEdge) {
	t.Helper()
	pub := dial(t, e.url, client.Options{AppKey: "demo"})
	ctx := ctxFor(t)
	for _, m := range []map[string]any{
		{"user": "alice", "text": "Is the edge up?"},
		{"user": "bob", "text": "Up, and serving its own WebAssembly client."},
	} {
		m["time"] = time.Now().UnixMilli()
		if _, err := pub.Publish(ctx, "chat.lobby", m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 50 {
		if _, err := pub.Publish(ctx, fmt.Sprintf("demo.load.%d", i%5), map[string]any{"i": int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
}

// overflowJS lists what does not fit the window sideways: the page, when
// it scrolls sideways; each element reaching past the window's right edge,
// but for the content of a box that scrolls (a code block); and each
// button, pill or input not wholly shown: past the window, cut off by a
// box that hides its overflow, or clipping its own content (the chat's
// Send once read "Se"). Empty when everything fits.
const overflowJS = `(() => {
	const w = window.innerWidth, out = [];
	const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
		(typeof e.className === "string" && e.className ? "." + e.className.trim().split(/\s+/).join(".") : "");
	const boxes = (e) => {
		const bs = [];
		for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
			const o = getComputedStyle(a).overflowX;
			if (o !== "visible") bs.push({box: a, scrolls: o === "auto" || o === "scroll"});
		}
		return bs;
	};
	const sw = document.documentElement.scrollWidth;
	if (sw > w) out.push("the page scrolls sideways: scrollWidth " + sw + " of " + w);
	for (const e of document.body.querySelectorAll("*")) {
		const r = e.getBoundingClientRect();
		if (r.width > 0 && r.right > w + 0.5 && !boxes(e).some((b) => b.scrolls))
			out.push(name(e) + " reaches " + Math.round(r.right) + " px");
	}
	for (const e of document.querySelectorAll("button, .pill, .member, input")) {
		const r = e.getBoundingClientRect();
		if (r.width === 0) continue;
		if (r.left < 0 || r.right > w + 0.5) out.push(name(e) + " is not all in the window: " + Math.round(r.left) + " to " + Math.round(r.right) + " px");
		for (const b of boxes(e)) {
			const br = b.box.getBoundingClientRect();
			if (!b.scrolls && (r.left < br.left - 0.5 || r.right > br.right + 0.5))
				out.push(name(e) + " is cut off by " + name(b.box) + ": " + Math.round(r.left) + " to " + Math.round(r.right) + " px in " + Math.round(br.left) + " to " + Math.round(br.right));
		}
		if (e.scrollWidth > e.clientWidth + 1) out.push(name(e) + " clips its content: scrollWidth " + e.scrollWidth + " of " + e.clientWidth);
	}
	return out;
})()`

// fitWidth sets the tab's window to width CSS pixels and waits until the
// page fits it (overflowJS), failing with what does not.
func fitWidth(p *tab, page string, width int64) {
	p.t.Helper()
	p.run(fmt.Sprintf("a %d px wide window", width), chromedp.EmulateViewport(width, 900))
	ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](overflowJS+".length === 0",
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(pageTimeout)))
	if err != nil {
		p.t.Fatalf("%s does not fit %d px (%v):\n  %s", page, width, err, strings.Join(evalJS[[]string](p, overflowJS), "\n  "))
	}
}

// demoWidths are the window widths the demo pages must fit, in CSS
// pixels: a phone's (the iPhone SE's, among the narrowest in use), a small
// tablet's and a laptop's.
var demoWidths = []int64{375, 500, 1280}

func testDemoPages(t *testing.T, b *chrome) {
	e := startDemoEdge(t)
	seedDemo(t, e)
	pages := []struct {
		name, path string
		ready      string       // a JavaScript condition: the page has done its work
		use        func(p *tab) // what a visitor does before the screenshot
	}{
		{name: "index", path: "/", ready: `document.querySelector("#to-chat") !== null`},
		{name: "chat", path: "/chat.html#lobby",
			ready: `document.querySelector("#state").dataset.state === "connected" && !document.querySelector("#send").disabled && document.querySelectorAll("#messages li .text").length === 2`,
			use: func(p *tab) {
				p.run("name the visitor", chromedp.SetValue(chromedp.CSS("#name"), "carol"))
				chatSay(p, "Hello from the browser, ünïcode and all ✓")
				chatWait(p, "Hello from the browser, ünïcode and all ✓")
			}},
		{name: "dashboard", path: "/dashboard.html",
			ready: `document.querySelector("#connections").textContent !== "–" && !document.querySelector("#traffic").disabled`,
			use: func(p *tab) {
				// The page's own button publishes for 3 s; then two more
				// samples show the burst and its end.
				p.run("make traffic", chromedp.Click(chromedp.CSS("#traffic")))
				p.waitJS("the traffic and two samples after it", `(() => {
					const b = document.querySelector("#traffic");
					if (!b.disabled && !window.trafficDoneAt) window.trafficDoneAt = performance.now();
					return window.trafficDoneAt && performance.now() - window.trafficDoneAt > 2200;
				})()`)
				// Within the default limits: nothing refused.
				if shown := evalJS[bool](p, `document.querySelector("#error").classList.contains("shown")`); shown {
					t.Errorf("the traffic button failed: %q", evalJS[string](p, `document.querySelector("#error").textContent`))
				}
			}},
	}
	for _, pg := range pages {
		p := b.newTab(t, e.url)
		p.open(pg.path)
		p.waitJS(pg.name+" to be ready", pg.ready)
		if pg.use != nil {
			pg.use(p)
		}
		path := p.screenshot("demo-" + pg.name)
		t.Logf("%s: screenshot %s", pg.path, path)
		// A phone's window (375 px), a small tablet's and a desktop's:
		// nothing overflows sideways, and no button or pill clips its text
		// (the chat's Send once read "Se" at 500 px).
		for _, width := range demoWidths {
			fitWidth(p, pg.path, width)
			t.Logf("%s at %d px: screenshot %s", pg.path, width, p.screenshot(fmt.Sprintf("demo-%s-%d", pg.name, width)))
		}
		if errs := p.consoleErrors(); len(errs) > 0 {
			t.Errorf("%s logged errors:\n%s", pg.path, strings.Join(errs, "\n"))
		}
	}
}

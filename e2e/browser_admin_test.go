package e2e

// The admin page (edge/admin) in Chromium: an operator logs in on the
// admin listener, sees a channel and its subscriber, publishes as the
// server and sees the message arrive (in the page and at a browser
// client), and disconnects that client, which sees its connection drop.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/wasm/client"
)

const (
	adminAppKey = "ops-admin-key-0123456789"
	adminJWT    = "ops-e2e-jwt-key-of-32-bytes-at-the-least"
	adminYAML   = `admin: {listen: 127.0.0.1:0}
apps:
  - appkey: ops
    jwt_key: "` + adminJWT + `"
    api_keys: ["` + adminAppKey + `"]
    roles:
      default: {publish: ["*"], subscribe: ["*"], presence: ["*"]}
`
)

// adminFits is true when the page does not overflow its window sideways
// and every control shows all of itself.
const adminFits = `document.documentElement.scrollWidth <= window.innerWidth &&
	[...document.querySelectorAll("button, .pill, input, select, textarea")].every((e) => {
		const r = e.getBoundingClientRect();
		return r.width === 0 || (r.left >= 0 && r.right <= window.innerWidth && e.scrollWidth <= e.clientWidth + 1);
	})`

func testAdminPage(t *testing.T, b *chrome) {
	e := startCmdEdge(t, adminYAML)
	requireWasm(t, e.url)

	// The client: carol, subscribed to ops.room, in a page of the edge.
	info, _ := json.Marshal(map[string]string{"name": "Carol"})
	tok, err := auth.Mint([]byte(adminJWT), auth.Claims{Role: "default", Subject: "carol", Info: info, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	c := b.newTab(t, e.url)
	c.name = "carol"
	c.openHarness()
	harnessMust[string](c, "connect", e.url, jsConnectOptions("ops", map[string]any{"token": tok}))
	harnessMust[string](c, "subscribe", "ops.room", map[string]any{})

	// The operator, on the admin listener: a wrong key is refused, and
	// says so; the right one opens the page.
	p := b.newTab(t, "ws://"+e.Info().Admin)
	p.name = "the operator"
	p.open("/admin/")
	p.run("the login form", chromedp.WaitVisible(chromedp.CSS("#key")))
	p.run("a wrong key", chromedp.SendKeys(chromedp.CSS("#key"), "not-the-key-0123456789"), chromedp.Click(chromedp.CSS("#login")))
	p.waitJS("the refusal", `document.querySelector("#login-error").textContent.startsWith("Wrong key: that is not an API key")`)
	p.run("the right key", chromedp.SetValue(chromedp.CSS("#key"), adminAppKey), chromedp.Click(chromedp.CSS("#login")))
	p.waitJS("the page", `!document.querySelector("#main-view").hidden && document.querySelector("#app").textContent === "app ops"`)
	if got := evalJS[string](p, "document.cookie"); got != "" {
		t.Errorf("the page's script reads cookies %q; the session's is HttpOnly", got)
	}
	p.waitJS("the edge's health", `document.querySelector("#ready").dataset.state === "ready" &&
		document.querySelector("#stats").textContent.includes("storagememory")`)

	// The channel, with its one subscriber, and carol in its presence.
	p.waitJS("ops.room and its subscriber", `(() => {
		const b = document.querySelector('#channels .channel[data-channel="ops.room"]');
		return b !== null && b.querySelector(".subs").textContent === "1 sub";
	})()`)
	p.run("pick ops.room", chromedp.Click(chromedp.CSS(`#channels .channel[data-channel="ops.room"]`)))
	p.waitJS("carol in the channel", `document.querySelector('#members li[data-user="carol"]') !== null &&
		document.querySelector("#channel-counts").textContent.startsWith("1 subscriber")`)

	// Publish as the server: the message arrives in the page's history
	// and at the client.
	p.run("publish", chromedp.SetValue(chromedp.CSS("#publish-message"), `{"text": "from the operator"}`),
		chromedp.Click(chromedp.CSS("#publish")))
	p.waitJS("the message in the history", `[...document.querySelectorAll("#history .body")].some((e) => e.textContent === '{"text":"from the operator"}')`)
	c.waitJS("the message at the client", `harness.received.some((r) => r.msg && r.msg.text === "from the operator")`)
	// Another client's message arrives too: the history is live.
	if _, err := dial(t, e.url, client.Options{AppKey: "ops"}).Publish(ctxFor(t), "ops.room", "from a Go client"); err != nil {
		t.Fatalf("publish from a Go client: %v", err)
	}
	p.waitJS("the Go client's message in the history", `document.querySelector("#history .body").textContent === '"from a Go client"'`)

	// Disconnect carol: the page says so, her client sees its connection
	// drop with the reason, and reconnects.
	seen := len(evalJS[[]string](c, "harness.states"))
	p.run("disconnect carol", chromedp.Click(chromedp.CSS(`#members li[data-user="carol"] button.danger`)))
	p.waitJS("the page's report", `document.querySelector("#disconnect-result").textContent === "Disconnected 1 connection of user carol on this edge."`)
	c.waitJS("the client's disconnect", fmt.Sprintf(`harness.states.slice(%d).includes("disconnected")`, seen))
	c.waitJS("the client back", fmt.Sprintf(`harness.states.slice(%d).at(-1) === "connected"`, seen))
	if !consoleHas(c, "disconnected by an operator") {
		t.Errorf("the client's console does not give the reason:\n%s", c.consoleText())
	}

	// Phone and desktop widths.
	for _, w := range []int64{375, 1280} {
		p.run(fmt.Sprintf("a %d px wide window", w), chromedp.EmulateViewport(w, 900))
		p.waitJS(fmt.Sprintf("the page to fit %d px", w), adminFits)
		t.Logf("admin page at %d px: screenshot %s", w, p.screenshot(fmt.Sprintf("admin-%d", w)))
	}

	// Log out: the login form, and the session is over on the edge too.
	p.run("log out", chromedp.Click(chromedp.CSS("#logout")))
	p.waitJS("the login form", `!document.querySelector("#login-view").hidden && document.querySelector("#login-error").textContent === "Logged out."`)
	if code := evalJS[int](p, `fetch("api/info", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"}).then((r) => r.status)`); code != 401 {
		t.Errorf("the API through the page after logging out: %d, want 401", code)
	}
	if errs := unexpectedErrors(p); len(errs) > 0 {
		t.Errorf("the admin page logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

// consoleHas reports whether a console message of the tab contains s.
func consoleHas(p *tab, s string) bool {
	for _, m := range p.consoleTexts() {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// unexpectedErrors are the page's errors but the browser's reports of the
// 401s the page expects (before the login, the wrong key, after the
// logout).
func unexpectedErrors(p *tab) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var errs []string
	for _, m := range p.console {
		if m.Type != chromedp.ConsoleError && !m.IsException() {
			continue
		}
		if m.Source == "network" && strings.Contains(m.Text, "401") {
			continue
		}
		errs = append(errs, m.String())
	}
	return errs
}

// testAdminPartitions: on an edge whose log is in partitions, the admin
// page's cluster section lists every partition's stream, not the first
// as the whole log (it did before).
func testAdminPartitions(t *testing.T, b *chrome) {
	e := startCmdEdge(t, adminYAML+fmt.Sprintf("cluster: {data_dir: %q, partitions: 2, sync: 1s}\n", t.TempDir()))
	p := b.newTab(t, "ws://"+e.Info().Admin)
	p.name = "the operator"
	p.open("/admin/")
	p.run("log in", chromedp.WaitVisible(chromedp.CSS("#key")), chromedp.SetValue(chromedp.CSS("#key"), adminAppKey),
		chromedp.Click(chromedp.CSS("#login")))
	p.waitJS("both partitions", `(() => {
		const s = document.querySelector("#cluster").textContent;
		return s.includes("The log is 2 partitions") && s.includes("Stream SLUICE-0 ") && s.includes("Stream SLUICE-1 ");
	})()`)
	if errs := unexpectedErrors(p); len(errs) > 0 {
		t.Errorf("the admin page logged errors:\n%s", strings.Join(errs, "\n"))
	}
}

package e2e

// The back/forward cache: a page that navigates away is frozen, not
// closed, and its WebSocket with it; sluice.js closes the connection on
// pagehide (persisted) and reconnects on pageshow, so its user leaves the
// channels' presence while away and comes back with every message.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/internal/poll"
)

// testChatBackForwardCache: bob's chat page navigates to another page of
// the edge and back. Alice sees him leave while he is away and come back;
// his page, restored from the cache (not loaded again), shows what alice
// said meanwhile, once. Should Chromium not keep the page, the same is
// checked by dispatching pagehide and pageshow (persisted) in the page.
func testChatBackForwardCache(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	room := fmt.Sprintf("bfcache-%d", time.Now().UnixNano())
	alice := chatOpenAs(t, b, e, room, "alice", "Alice")
	bob := chatOpenAs(t, b, e, room, "bob", "Bob")
	waitMembers(alice, "Alice", "Bob")
	evalJS[bool](bob, `window.__kept = true; window.__shown = []; addEventListener("pageshow", (ev) => __shown.push(ev.persisted)); true`)

	bob.run("navigate to another page of the edge", chromedp.Navigate(bob.base))
	waitMembers(alice, "Alice")
	chatSay(alice, "while bob was away")
	back(bob)
	if !evalJS[bool](bob, `window.__kept === true && JSON.stringify(__shown) === "[true]"`) {
		t.Logf("Chromium loaded bob's page again instead of restoring it from the back/forward cache; dispatching the events instead")
		waitMembers(alice, "Alice", "Bob")
		evalUntil(bob, "bob's chat to join", `!document.querySelector("#send").disabled`)
		evalJS[bool](bob, `dispatchEvent(new PageTransitionEvent("pagehide", {persisted: true})), true`)
		waitMembers(alice, "Alice")
		chatSay(alice, "while bob was hidden")
		evalJS[bool](bob, `dispatchEvent(new PageTransitionEvent("pageshow", {persisted: true})), true`)
		waitMembers(alice, "Alice", "Bob")
		waitOnce(bob, "while bob was hidden")
		return
	}
	waitMembers(alice, "Alice", "Bob")
	waitOnce(bob, "while bob was away")
}

// back goes back in p's history and waits until the chat page is there
// again: from the back/forward cache, or loaded anew. The evaluations
// during the navigation fail (the page's context goes); they are retried.
func back(p *tab) {
	p.t.Helper()
	evalJS[bool](p, `setTimeout(() => history.back(), 0), true`)
	evalUntil(p, "the chat page back", `location.pathname === "/chat.html" && document.readyState === "complete"`)
}

// waitOnce waits until a chat page shows text, and checks it shows it
// once.
func waitOnce(p *tab, text string) {
	p.t.Helper()
	evalUntil(p, fmt.Sprintf("%q on the page", text), fmt.Sprintf("%s.includes(%q)", chatTexts, text))
	if n := evalJS[int](p, fmt.Sprintf("%s.filter((t) => t === %q).length", chatTexts, text)); n != 1 {
		p.t.Fatalf("%s shows %q %d times, want once", p, text, n)
	}
}

// evalUntil evaluates expr until it is true. Unlike waitJS it evaluates
// anew each time, in whatever document p has: chromedp's own polling
// stays with the document it started in, which a page restored from the
// back/forward cache is not.
func evalUntil(p *tab, what, expr string) {
	p.t.Helper()
	poll.UntilNil(p.t, what, func() error {
		ctx, cancel := context.WithTimeout(p.ctx, time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		if err == nil && !ok {
			err = errors.New("not yet")
		}
		return err
	})
}

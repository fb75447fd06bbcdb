package e2e

// The browser client's fallback: a page whose WebSocket cannot open chats
// over HTTP streaming (Server-Sent Events and POSTs, client-js/stream.js
// and the edge's /v2/stream), both ways, with a page on a WebSocket.

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// blockWebSocket makes every page the tab opens from now on throw from
// its WebSocket constructor, as a page under a policy that forbids it;
// a proxy that refuses upgrades fails the socket later, which the
// client handles the same way (its close before open).
func blockWebSocket(p *tab) {
	p.t.Helper()
	p.run("block WebSocket", func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `globalThis.WebSocket = class { constructor() { throw new DOMException("WebSocket blocked by the test", "SecurityError"); } };`,
		})
		return chromedp.Void{}, err
	})
}

func TestBrowserChatFallsBackToHTTPStreaming(t *testing.T) {
	b := startChrome(t)
	e := startDemoEdge(t)
	room := "fallback"

	alice := b.newTab(t, e.url)
	alice.name = "alice"
	blockWebSocket(alice)
	alice.open("/chat.html#" + room)
	alice.run("wait for alice's chat to join",
		chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#name"), "alice"),
	)
	bob := chatOpen(t, b, e, room, "bob")

	chatSay(alice, "hello bob, from behind a proxy")
	chatWait(bob, "hello bob, from behind a proxy")
	chatSay(bob, "hi alice, over a WebSocket")
	chatWait(alice, "hi alice, over a WebSocket")

	// Each page says how it is connected.
	if got := evalJS[string](alice, `document.getElementById("state").textContent`); !strings.Contains(got, "HTTP streaming") {
		t.Errorf("alice's state pill says %q, want it to name HTTP streaming", got)
	}
	if got := evalJS[string](bob, `document.getElementById("state").textContent`); got != "connected" {
		t.Errorf("bob's state pill says %q, want connected", got)
	}
	if errs := alice.consoleErrors(); len(errs) > 0 {
		t.Errorf("alice's console has errors: %q", errs)
	}
}

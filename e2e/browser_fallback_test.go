package e2e

// The browser client's fallback: a page whose WebSocket cannot open chats
// over HTTP streaming (Server-Sent Events and POSTs, client-js/stream.js
// and the edge's /v2/stream), both ways, with a page on a WebSocket.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
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

// upgradeBlockingProxy is a reverse proxy to the edge at url (ws://...)
// that refuses WebSocket upgrades, as corporate proxies do, and passes
// everything else, streams included; it returns its own ws:// URL.
func upgradeBlockingProxy(t *testing.T, edgeURL string) string {
	t.Helper()
	target, err := url.Parse("http" + strings.TrimPrefix(edgeURL, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	transport := &http.Transport{}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = transport
	rp.FlushInterval = -1 // pass each write of a stream on at once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			http.Error(w, "WebSocket upgrades are not allowed by this proxy", http.StatusForbidden)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		transport.CloseIdleConnections()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestBrowserChatFallsBackToHTTPStreaming(t *testing.T) {
	b := startChrome(t)
	e := startDemoEdge(t)
	t.Run("WebSocketThrows", func(t *testing.T) {
		alice := b.newTab(t, e.url)
		blockWebSocket(alice)
		testChatThroughFallback(t, b, e, alice, "fallback-throws")
	})
	t.Run("ProxyRefusesUpgrades", func(t *testing.T) {
		alice := b.newTab(t, upgradeBlockingProxy(t, e.url))
		testChatThroughFallback(t, b, e, alice, "fallback-proxy")
	})
}

// testChatThroughFallback chats both ways between alice's tab, whose
// WebSocket cannot open, and bob's, on a WebSocket.
func testChatThroughFallback(t *testing.T, b *chrome, e *cmdEdge, alice *tab, room string) {
	alice.name = "alice"
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
	// The browser's own report of the refused handshake is expected;
	// nothing else.
	for _, e := range alice.consoleErrors() {
		if !strings.Contains(e, "WebSocket connection to") {
			t.Errorf("alice's console has an error: %q", e)
		}
	}
}

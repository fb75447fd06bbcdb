package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// deflateConfig serves two apps alike but for permessage-deflate.
const deflateConfig = `
apps:
  - appkey: squeezed
    deflate: true
    deflate_threshold: 64B
    roles:
      default: {publish: ["*"], subscribe: ["*"]}
  - appkey: plain
    roles:
      default: {publish: ["*"], subscribe: ["*"]}
`

// deflateChatJS opens the browser's own WebSocket to an app of the edge
// (the page's origin), subscribes, publishes a message of 2 KiB (which
// Chromium compresses when deflate was negotiated, and the edge too on
// the way back) and returns the negotiated extensions and the text that
// came back through the subscription.
const deflateChatJS = `(async (appkey) => {
  const ws = new WebSocket(location.origin.replace(/^http/, "ws") + "/v2?appkey=" + appkey, "json");
  const queue = [], waiters = [];
  ws.onmessage = (e) => { queue.push(JSON.parse(e.data)); while (waiters.length) waiters.shift()(); };
  await new Promise((ok, fail) => { ws.onopen = ok; ws.onerror = () => fail(new Error("websocket failed")); });
  const next = async (action) => {
    for (;;) {
      const i = queue.findIndex((p) => p.action === action);
      if (i >= 0) return queue.splice(i, 1)[0];
      if (queue.some((p) => p.action.endsWith("/error"))) throw new Error(JSON.stringify(queue));
      await new Promise((ok) => waiters.push(ok));
    }
  };
  ws.send(JSON.stringify({action: "rtm/subscribe", id: 1, body: {channel: "room"}}));
  await next("rtm/subscribe/ok");
  const text = "hello from Chromium; ".repeat(100);
  ws.send(JSON.stringify({action: "rtm/publish", id: 2, body: {channel: "room", message: {user: "ann", text}}}));
  await next("rtm/publish/ok");
  const data = await next("rtm/subscription/data");
  ws.close();
  return JSON.stringify({extensions: ws.extensions, text: data.body.messages[0].text, same: data.body.messages[0].text === text});
})`

// TestBrowserDeflate: Chromium's WebSocket offers permessage-deflate; the
// edge takes it for an app that enables it (ws.extensions names it) and
// the chat works both ways compressed; an app without it declines.
func TestBrowserDeflate(t *testing.T) {
	e := startCmdEdge(t, deflateConfig)
	b := startChrome(t)
	p := b.newTab(t, e.url)
	p.open("/")
	for _, tc := range []struct {
		appkey string
		want   string // prefix of ws.extensions
	}{
		{"squeezed", "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
		{"plain", ""},
	} {
		raw := evalJS[string](p, deflateChatJS+`(`+jsString(tc.appkey)+`)`)
		var got struct {
			Extensions string `json:"extensions"`
			Same       bool   `json:"same"`
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%s: %v in %s", tc.appkey, err, raw)
		}
		if !strings.HasPrefix(got.Extensions, tc.want) || (tc.want == "") != (got.Extensions == "") {
			t.Errorf("%s: ws.extensions = %q, want %q", tc.appkey, got.Extensions, tc.want)
		}
		if !got.Same {
			t.Errorf("%s: the message did not come back whole: %s", tc.appkey, raw)
		}
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

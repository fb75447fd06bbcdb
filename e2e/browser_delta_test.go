package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// deltaPageJS connects the page's Sluice client and subscribes to %[2]q
// three ways: with deltas, without, and with deltas from the position
// window.from once it is set (resumed: its first message comes whole).
// Each handler keeps what it gets in window.got[its name].
const deltaPageJS = `(async () => {
  const { Sluice, load } = await import(location.origin + "/sluice.js");
  await load();
  const client = await Sluice.connect(%[1]q, { appkey: %[3]q });
  window.deltaClient = client;
  window.got = { delta: [], plain: [], resumed: [] };
  await client.subscribe(%[2]q, { delta: true }, (m) => window.got.delta.push(m)).ready;
  await client.subscribe(%[2]q, { id: "plain" }, (m) => window.got.plain.push(m)).ready;
  return true;
})()`

// TestBrowserDelta: the browser client (sluice.wasm) with delta: true
// hands its handler exactly the messages of a feed of 2 KB objects, as a
// subscription without deltas does, live and resumed from a position.
func TestBrowserDelta(t *testing.T) {
	e := startBrowserEdge(t)
	b := startChrome(t)
	p := b.newTab(t, e.url)
	p.open("/")
	const channel = "open.delta"
	if !evalJS[bool](p, fmt.Sprintf(deltaPageJS, e.url, channel, browserAppkey)) {
		t.Fatalf("the page did not subscribe\n%s", p.consoleText())
	}
	pub := browserPublisher(t, e)
	const n = 20
	var want []any
	var first string
	for i := range n {
		pos, err := pub.Publish(ctxFor(t), channel, feedValue(i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = pos.String()
		}
		b, _ := json.Marshal(feedValue(i))
		var v any
		_ = json.Unmarshal(b, &v)
		want = append(want, v)
	}
	evalJS[bool](p, fmt.Sprintf(`(window.deltaClient.subscribe(%q, { id: "resumed", delta: true, position: %q },
	  (m) => window.got.resumed.push(m)), true)`, channel, first))
	for _, name := range []string{"delta", "plain", "resumed"} {
		p.waitJS(name+" messages", fmt.Sprintf("window.got.%s.length >= %d", name, n))
		got := evalJS[[]any](p, "window.got."+name)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s subscription got %d messages, not the %d published:\n%v", name, len(got), n, got)
		}
	}
}

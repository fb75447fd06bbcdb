package e2e

// A live chat page while its edge restarts under it.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// testChatSurvivesRestart opens the demo chat through a proxy, then kills
// the edge and starts another (in memory: a new epoch, no history) behind
// the proxy. While no edge serves, the page says so and cannot send; once
// the new one does, it tells the user messages may be missing, and it
// still sends and receives.
func testChatSurvivesRestart(t *testing.T, b *chrome) {
	a := startEdgeProcess(t) // a process, for the SIGKILL
	requireWasm(t, a.url)
	px := newProxy(t, strings.TrimPrefix(a.url, "ws://"))
	room := fmt.Sprintf("restart-%d", time.Now().UnixNano())
	p := b.newTab(t, px.url())
	p.open("/chat.html#" + room)
	p.run("wait for the chat to join",
		chromedp.WaitEnabled(chromedp.CSS("#send")),
		chromedp.SetValue(chromedp.CSS("#name"), "alice"),
	)
	chatSay(p, "before the restart")
	chatWait(p, "before the restart")

	a.kill()
	p.waitJS("the page to show it is not connected", `document.querySelector("#state").dataset.state !== "connected" && document.querySelector("#send").disabled`)
	if n := evalJS[int](p, `document.querySelectorAll("#messages li.gap").length`); n != 0 {
		t.Fatalf("%d gap notices before a new edge serves", n)
	}
	e := startDemoEdge(t)
	px.retarget(strings.TrimPrefix(e.url, "ws://"))
	px.cut() // anything the kill left half-open
	p.waitJS("the gap notice", `[...document.querySelectorAll("#messages li.gap")].some((li) => li.textContent.includes("may have missed messages"))`)
	p.waitJS("connected and able to send again", `document.querySelector("#state").dataset.state === "connected" && !document.querySelector("#send").disabled`)

	// Receives: a message published on the new edge shows.
	bob := dial(t, e.url, client.Options{AppKey: "demo"})
	ctx := ctxFor(t)
	heard := make(chan client.Message, 4)
	if _, err := bob.Subscribe(ctx, "chat."+room, nil, func(m client.Message) { heard <- m }); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.Publish(ctx, "chat."+room, map[string]any{"user": "bob", "text": "welcome back", "time": time.Now().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	chatWait(p, "welcome back")
	// Sends: what the page says reaches the new edge.
	chatSay(p, "after the restart")
	chatWait(p, "after the restart")
	for {
		m := poll.Recv(t, "the page's message on the new edge", heard)
		if v, ok := m.Value.(map[string]any); ok && v["text"] == "after the restart" && v["user"] == "alice" {
			break
		}
	}
	if got := evalJS[[]string](p, chatTexts); strings.Join(got, "|") != "before the restart|welcome back|after the restart" {
		t.Errorf("%s shows %q, want the line before the restart, then bob's and alice's after it", p.base, got)
	}
	if shown := evalJS[bool](p, `document.querySelector("#error").classList.contains("shown")`); shown {
		t.Errorf("the page shows an error: %q", evalJS[string](p, `document.querySelector("#error").textContent`))
	}
}

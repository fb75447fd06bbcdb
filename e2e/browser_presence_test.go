package e2e

// Presence in the browser: the chat page's member list, through
// sub.on("members" | "join" | "leave") and sub.presence().

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/edge/auth"
)

// chatMembers lists the names in a chat page's member list.
const chatMembers = `[...document.querySelectorAll("#members .member")].map((e) => e.textContent)`

// chatOpenAs opens the chat page of a room with a token for user (named
// name in its info), or as a guest when user is "", and waits until it
// can send.
func chatOpenAs(t *testing.T, b *chrome, e *cmdEdge, room, user, name string) *tab {
	t.Helper()
	q := url.Values{"appkey": {browserAppkey}}
	if user != "" {
		info, _ := json.Marshal(map[string]string{"name": name})
		tok, err := auth.Mint([]byte(browserJWTSecret), auth.Claims{Role: "default", Subject: user, Info: info, Expires: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		q.Set("token", tok)
	}
	p := b.newTab(t, e.url)
	p.name = user
	p.open("/chat.html?" + q.Encode() + "#" + room)
	p.run("wait for the chat to join", chromedp.WaitEnabled(chromedp.CSS("#send")))
	return p
}

// waitMembers waits until a chat page's member list is want, in order.
func waitMembers(p *tab, want ...string) {
	p.t.Helper()
	w, _ := json.Marshal(want)
	ctx, cancel := context.WithTimeout(p.ctx, pageTimeout)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf("JSON.stringify(%s) === %q", chatMembers, w),
		chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(pageTimeout)))
	if err != nil {
		p.t.Fatalf("%s: member list %q, want %s: %v\n%s", p, evalJS[[]string](p, chatMembers), w, err, p.consoleText())
	}
}

func testChatPresence(t *testing.T, b *chrome) {
	e := startBrowserEdge(t)
	room := fmt.Sprintf("presence-%d", time.Now().UnixNano())
	chatOpenAs(t, b, e, room, "", "") // a guest: counted, not named
	alice := chatOpenAs(t, b, e, room, "alice", "Alice")
	waitMembers(alice, "Alice", "1 guest")
	bob := chatOpenAs(t, b, e, room, "bob", "Bob")
	waitMembers(bob, "Alice", "Bob", "1 guest")
	waitMembers(alice, "Alice", "Bob", "1 guest")
	// Bob's second tab makes him no second member.
	bob2 := chatOpenAs(t, b, e, room, "bob", "Bob")
	waitMembers(bob2, "Alice", "Bob", "1 guest")
	// Bob's tabs leave, one for another room (its #room changes), one
	// closed: alice sees him leave once both are gone.
	evalJS[string](bob, `location.hash = "elsewhere"`)
	waitMembers(bob, "Bob")
	if got := evalJS[[]string](alice, chatMembers); len(got) != 3 {
		t.Fatalf("with one of bob's tabs still in the room, alice's list is %q", got)
	}
	if err := chromedp.Cancel(bob2.ctx); err != nil {
		t.Fatalf("close bob's second tab: %v", err)
	}
	waitMembers(alice, "Alice", "1 guest")
	// Guests are counted as they come and go.
	guest := chatOpenAs(t, b, e, room, "", "")
	waitMembers(alice, "Alice", "2 guests")
	if err := chromedp.Cancel(guest.ctx); err != nil {
		t.Fatalf("close the second guest's tab: %v", err)
	}
	waitMembers(alice, "Alice", "1 guest")
}

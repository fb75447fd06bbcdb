package e2e

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// TestSuspendResume: a suspended Go client closes its connection, so
// the room sees its user leave at once, and does not reconnect; Resume
// reconnects it and resubscribes from its position: the messages
// published meanwhile arrive in order, none twice, and the user is back.
func TestSuspendResume(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	ann := dial(t, e.url, client.Options{Token: presenceToken(t, "ann", "")})
	got := make(chan string, 16)
	if _, err := ann.Subscribe(ctxFor(t), "room.s", nil, func(m client.Message) { got <- fmt.Sprint(m.Value) }); err != nil {
		t.Fatal(err)
	}
	bob := dial(t, e.url, client.Options{Token: presenceToken(t, "bob", "")})
	var opts client.SubscribeOptions
	events := presenceLog(&opts)
	if _, err := bob.Subscribe(ctxFor(t), "room.s", &opts, func(client.Message) {}); err != nil {
		t.Fatal(err)
	}
	if ev := poll.Recv(t, "bob's snapshot", events); ev != "members [ann bob]" {
		t.Fatalf("snapshot %q", ev)
	}
	pub := publisher(t, e.url, "")
	publish := func(v string) {
		t.Helper()
		if _, err := pub.Publish(ctxFor(t), "room.s", v); err != nil {
			t.Fatal(err)
		}
	}
	publish("one")
	if m := poll.Recv(t, "one", got); m != "one" {
		t.Fatalf("got %q", m)
	}

	ann.Suspend()
	ann.Suspend() // idempotent
	if ev := poll.Recv(t, "ann's leave", events); ev != "leave ann" {
		t.Fatalf("after Suspend bob heard %q, want ann's leave", ev)
	}
	poll.Until(t, "ann disconnected", func() bool { return ann.State() == client.Disconnected })
	publish("two")
	publish("three")

	ann.Resume()
	if ev := poll.Recv(t, "ann's join", events); ev != "join ann <nil>" {
		t.Fatalf("after Resume bob heard %q, want ann's join", ev)
	}
	for _, want := range []string{"two", "three"} {
		if m := poll.Recv(t, want, got); m != want {
			t.Fatalf("after Resume ann got %q, want %q", m, want)
		}
	}
	publish("four")
	if m := poll.Recv(t, "four", got); m != "four" {
		t.Fatalf("got %q, want four (nothing twice)", m)
	}
	// Connected once every subscription is restored (the reconnect's
	// end): the restored ones deliver before the supervisor records it.
	poll.Until(t, "ann connected after Resume", func() bool { return ann.State() == client.Connected })
}

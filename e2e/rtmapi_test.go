package e2e

import (
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// TestClientRTMOptions drives Satori's options through the Go client, in
// msgpack, against a real edge: compare-and-set writes, purge, and a
// subscription that only gets value changes.
func TestClientRTMOptions(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	c := dial(t, e.url, client.Options{Role: "publisher", RoleSecret: pubSecret})
	ctx := ctxFor(t)

	vals := make(chan any, 16)
	if _, err := c.Subscribe(ctx, "kv.cas", &client.SubscribeOptions{OnlyChanges: true}, func(m client.Message) { vals <- m.Value }); err != nil {
		t.Fatalf("Subscribe with OnlyChanges: %v", err)
	}
	p1, err := c.WriteIf(ctx, "kv.cas", "a", rtm.Position{})
	if err != nil {
		t.Fatalf("WriteIf at 0:0 on an empty channel: %v", err)
	}
	p2, err := c.WriteIf(ctx, "kv.cas", "a", p1) // the same value again
	if err != nil {
		t.Fatalf("WriteIf at the newest %v: %v", p1, err)
	}
	if _, err := c.WriteIf(ctx, "kv.cas", "stale", p1); codeOf(err) != rtm.CodePositionMismatch {
		t.Fatalf("WriteIf at the stale %v: %v, want position_mismatch", p1, err)
	}
	if _, err := c.WriteIf(ctx, "kv.cas", "b", p2); err != nil {
		t.Fatalf("WriteIf at %v: %v", p2, err)
	}
	var got []any
	for len(got) < 2 {
		got = append(got, poll.Recv(t, "a value change", vals))
	}
	if !reflect.DeepEqual(got, []any{"a", "b"}) {
		t.Fatalf("OnlyChanges subscriber got %v, want a, b (the repeated a skipped, the refused write never stored)", got)
	}

	if err := c.Purge(ctx, "kv.cas"); err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if msg, _, err := c.Read(ctx, "kv.cas"); err != nil || msg != nil {
		t.Fatalf("Read after Purge: %v, %v; want nothing", msg, err)
	}
	if _, _, err := c.Read(ctx, "kv.cas", client.AtPosition(p1)); codeOf(err) != rtm.CodeExpiredPosition {
		t.Fatalf("Read at %v after Purge: %v, want expired_position", p1, err)
	}
	if _, err := c.Publish(ctx, "kv.cas", "after"); err != nil {
		t.Fatal(err)
	}
	if v := poll.Recv(t, "the message after the purge", vals); v != "after" {
		t.Fatalf("after the purge the subscriber got %v, want after", v)
	}
}

// TestClientPrefix: a Prefix subscription of the Go client gets the
// messages of every channel under the prefix, each naming its channel.
func TestClientPrefix(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	c := dial(t, e.url, client.Options{Role: "publisher", RoleSecret: pubSecret})
	ctx := ctxFor(t)
	got := make(chan client.Message, 16)
	if _, err := c.Subscribe(ctx, "dev.", &client.SubscribeOptions{Prefix: true}, func(m client.Message) { got <- m }); err != nil {
		t.Fatalf("Subscribe with Prefix: %v", err)
	}
	if _, err := c.Subscribe(ctx, "dev.", &client.SubscribeOptions{ID: "p2", Prefix: true, Position: &rtm.Position{Epoch: 1, Offset: 1}},
		func(client.Message) {}); err == nil {
		t.Fatal("a Prefix subscription with a Position was accepted")
	}
	want := map[string]any{}
	for i, ch := range []string{"dev.a", "dev.b", "dev.c"} {
		if _, err := c.Publish(ctx, ch, int64(i)); err != nil {
			t.Fatal(err)
		}
		want[ch] = int64(i)
	}
	if _, err := c.Publish(ctx, "prod.a", "no"); err != nil {
		t.Fatal(err)
	}
	have := map[string]any{}
	for len(have) < len(want) {
		m := poll.Recv(t, "a message under dev.", got)
		have[m.Channel] = m.Value
	}
	if !reflect.DeepEqual(have, want) {
		t.Fatalf("got %v, want %v", have, want)
	}
}

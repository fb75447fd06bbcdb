package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// feedValue is the i-th message of a feed: a 2 KB object of which a few
// fields change, in the canonical model (as a handler gets it back).
func feedValue(i int) map[string]any {
	rows := make([]any, 20)
	for j := range rows {
		rows[j] = map[string]any{"symbol": fmt.Sprintf("SYM%02d", j), "venue": "XNAS", "bid": int64(100 + j), "ask": 101.5 + float64(j)}
	}
	rows[i%20].(map[string]any)["bid"] = int64(1000 + i)
	return map[string]any{"seq": int64(i), "rows": rows, "note": strings.Repeat("steady ", 20)}
}

// TestDeltaEachCodec checks SubscribeOptions.Delta with the Go client in
// each codec: the handler gets exactly the values published, as a
// subscription without deltas does, live and resumed from a position
// (whose first message the edge sends whole). CBOR has no deltas: its
// subscriber gets whole messages.
func TestDeltaEachCodec(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	for _, cd := range []string{"json", "msgpack", "cbor"} {
		t.Run(cd, func(t *testing.T) {
			t.Parallel()
			pub := publisher(t, e.url, cd)
			c := dial(t, e.url, client.Options{Codec: cd})
			ctx := ctxFor(t)
			channel := "delta." + cd
			var got, plain inbox
			if _, err := c.Subscribe(ctx, channel, &client.SubscribeOptions{Delta: true}, got.handle); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Subscribe(ctx, channel, &client.SubscribeOptions{ID: "plain"}, plain.handle); err != nil {
				t.Fatal(err)
			}
			const n = 30
			var want []string
			var first rtm.Position
			for i := range n {
				pos, err := pub.Publish(ctx, channel, feedValue(i))
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = pos
				}
				want = append(want, fmt.Sprint(feedValue(i)))
			}
			got.expect(t, want)
			plain.expect(t, want)
			var resumed inbox
			opts := &client.SubscribeOptions{ID: "resumed", Delta: true, Position: &first, Batch: 4}
			if _, err := c.Subscribe(ctx, channel, opts, resumed.handle); err != nil {
				t.Fatal(err)
			}
			resumed.expect(t, want)
		})
	}
}

// TestDeltaOptions checks that Delta is refused with the options that
// make a subscription's previous message its own.
func TestDeltaOptions(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	c := dial(t, e.url, client.Options{})
	for _, o := range []client.SubscribeOptions{
		{ID: "f", Delta: true, Filter: "select * from `x`"},
		{Delta: true, OnlyChanges: true},
		{Delta: true, Prefix: true},
	} {
		if _, err := c.Subscribe(ctxFor(t), "x", &o, func(client.Message) {}); err == nil || !strings.Contains(err.Error(), "Delta") {
			t.Errorf("Subscribe with %+v: %v, want a refusal of Delta", o, err)
		}
	}
}

package e2e

import (
	"fmt"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// TestViewInEveryCodec: a stream view's projection reaches subscribers of
// every codec as the same value (it is computed in msgpack and encoded
// for each), and a SELECT * view passes the message as published.
func TestViewInEveryCodec(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	codecs := []string{"msgpack", "json", "cbor"}
	projected := make([]*inbox, len(codecs))
	whole := make([]*inbox, len(codecs))
	counted := make([]*tally, len(codecs))
	for i, cd := range codecs {
		projected[i], whole[i], counted[i] = &inbox{}, &inbox{}, &tally{}
		c := dial(t, e.url, client.Options{Codec: cd})
		if _, err := c.Subscribe(ctxFor(t), "", &client.SubscribeOptions{ID: "n",
			Filter: "SELECT COUNT(*) AS n FROM sensors"}, counted[i].handle); err != nil {
			t.Fatalf("%s: Subscribe: %v", cd, err)
		}
		if _, err := c.Subscribe(ctxFor(t), "", &client.SubscribeOptions{ID: "p",
			Filter: "SELECT upper(who) AS who, round(temp) AS t FROM sensors WHERE temp >= 20"}, projected[i].handle); err != nil {
			t.Fatalf("%s: Subscribe: %v", cd, err)
		}
		if _, err := c.Subscribe(ctxFor(t), "sensors", &client.SubscribeOptions{ID: "w",
			Filter: "SELECT * FROM sensors WHERE who LIKE 'k%'"}, whole[i].handle); err != nil {
			t.Fatalf("%s: Subscribe: %v", cd, err)
		}
	}
	p := publisher(t, e.url, "json")
	for _, m := range []map[string]any{
		{"who": "kitchen", "temp": 21.6},
		{"who": "cellar", "temp": 12.0},
		{"who": "attic", "temp": 30.2, "extra": []any{1, "x"}},
	} {
		if _, err := p.Publish(ctxFor(t), "sensors", m); err != nil {
			t.Fatal(err)
		}
	}
	for i, cd := range codecs {
		t.Run(cd, func(t *testing.T) {
			projected[i].expect(t, []string{fmt.Sprint(map[string]any{"who": "KITCHEN", "t": int64(22)}),
				fmt.Sprint(map[string]any{"who": "ATTIC", "t": int64(30)})})
			whole[i].expect(t, []string{fmt.Sprint(map[string]any{"who": "kitchen", "temp": 21.6})})
			// The period's end may fall between the publishes: the
			// results add up to the three messages, each a count.
			poll.Until(t, cd+" aggregate results", func() bool { return counted[i].sum() >= 3 })
			if n := counted[i].sum(); n != 3 {
				t.Fatalf("the periods counted %d messages, want 3", n)
			}
		})
	}
}

// tally adds up the n of a COUNT view's results.
type tally struct {
	mu sync.Mutex
	n  int64
}

func (c *tally) handle(m client.Message) {
	v, _ := m.Value.(map[string]any)["n"].(int64)
	c.mu.Lock()
	c.n += v
	c.mu.Unlock()
}

func (c *tally) sum() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

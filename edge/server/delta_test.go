package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/centrifugal/fdelta"

	"github.com/sluicehq/sluice/edge/server/servertest"
)

// deltaPDU is a data PDU as a delta subscriber reads it: each message's
// bytes as the edge wrote them.
type deltaPDU struct {
	Action string `json:"action"`
	Body   struct {
		SubscriptionID string            `json:"subscription_id"`
		Position       string            `json:"position"`
		Messages       []json.RawMessage `json:"messages"`
		Delta          bool              `json:"delta"`
	} `json:"body"`
}

// deltaReader applies what a delta subscriber receives, as a client
// does, keeping the JSON of the last message.
type deltaReader struct {
	c      *rawClient
	base   []byte
	deltas int // messages that came as deltas
	wire   int // bytes of the messages as they came
}

// next reads data PDUs of sub until n messages came; it returns their
// JSON.
func (r *deltaReader) next(sub string, n int) []string {
	r.c.t.Helper()
	var out []string
	for len(out) < n {
		p := servertest.Recv[deltaPDU](r.c.t, r.c.ws, recvTimeout)
		if p.Action != "rtm/subscription/data" || p.Body.SubscriptionID != sub {
			r.c.t.Fatalf("waiting for data of %s: got %s", sub, p.Action)
		}
		for _, m := range p.Body.Messages {
			r.wire += len(m)
			if !p.Body.Delta {
				r.base = m
				out = append(out, string(m))
				continue
			}
			var d string
			if err := json.Unmarshal(m, &d); err != nil {
				r.c.t.Fatalf("a delta that is not a string: %s", m)
			}
			b, err := fdelta.Apply(r.base, []byte(d))
			if err != nil {
				r.c.t.Fatalf("delta %q does not apply to %s: %v", d, r.base, err)
			}
			r.deltas++
			r.base = b
			out = append(out, string(b))
		}
	}
	return out
}

// feedMessage is the i-th message of a feed: a 2 KB object of which a
// few fields change.
func feedMessage(i int) map[string]any {
	rows := make([]any, 20)
	for j := range rows {
		rows[j] = map[string]any{"symbol": fmt.Sprintf("SYM%02d", j), "venue": "XNAS", "currency": "USD", "bid": 100 + j, "ask": 101 + j}
	}
	rows[i%20].(map[string]any)["bid"] = 1000 + i
	return map[string]any{"seq": i, "rows": rows, "note": strings.Repeat("steady ", 20)}
}

// canonical is the JSON the edge writes for m.
func canonical(t *testing.T, m any) string {
	t.Helper()
	var v any
	b, _ := json.Marshal(m)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(v) // sorted keys, as the edge writes them
	return string(out)
}

// TestDeltaSubscription checks the delta extension on the wire: a
// subscription that asks gets its first message whole and the next ones
// as fossil deltas that rebuild the exact JSON of each message, in far
// fewer bytes; one that does not ask gets whole messages; a resumed one
// starts whole again.
func TestDeltaSubscription(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	pub := e.dial(t, "test", "")
	sub := e.dial(t, "test", "")
	plain := e.dial(t, "test", "")
	sub.expectOK("rtm/subscribe", 1, map[string]any{"channel": "feed", "delta": true})
	plain.expectOK("rtm/subscribe", 1, map[string]any{"channel": "feed"})
	const n = 10
	var want []string
	var first string
	for i := range n {
		body := pub.expectOK("rtm/publish", 1+i, map[string]any{"channel": "feed", "message": feedMessage(i)})
		if i == 0 {
			first = body["position"].(string)
		}
		want = append(want, canonical(t, feedMessage(i)))
	}
	dr := &deltaReader{c: sub}
	if got := dr.next("feed", n); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("delta subscriber got\n%s\nwant\n%s", got, want)
	}
	if dr.deltas != n-1 {
		t.Errorf("%d of %d messages came as deltas, want all but the first", dr.deltas, n)
	}
	whole := 0
	for _, w := range want {
		whole += len(w)
	}
	if dr.wire*5 > whole {
		t.Errorf("%d bytes of messages with deltas, %d without: not 5x fewer", dr.wire, whole)
	}
	pr := &deltaReader{c: plain}
	if got := pr.next("feed", n); strings.Join(got, "\n") != strings.Join(want, "\n") || pr.deltas != 0 {
		t.Fatalf("plain subscriber got %d deltas and\n%s", pr.deltas, got)
	}

	// Resumed from the first position, with history in the way: the
	// first message after the gap is whole.
	re := e.dial(t, "test", "")
	re.expectOK("rtm/subscribe", 1, map[string]any{"channel": "feed", "delta": true, "position": first, "batch": 3})
	rr := &deltaReader{c: re}
	if got := rr.next("feed", n); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("resumed delta subscriber got\n%s", got)
	}
	if rr.deltas != n-1 {
		t.Errorf("resumed: %d of %d messages came as deltas, want all but the first", rr.deltas, n)
	}
}

// TestDeltaRefused checks that delta is refused where a subscription's
// previous message is its own: with a filter, value_changes or a prefix.
func TestDeltaRefused(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	for i, body := range []map[string]any{
		{"subscription_id": "v", "filter": "select * from `feed`", "delta": true},
		{"channel": "feed", "only": "value_changes", "delta": true},
		{"channel": "feed", "prefix": true, "delta": true},
	} {
		c.expectError("rtm/subscribe", 1+i, body, "invalid_format")
	}
}

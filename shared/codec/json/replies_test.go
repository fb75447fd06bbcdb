package json_test

import (
	stdjson "encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// replyBodies returns every body written by hand in place of the library,
// with its strings set to s and its count to n.
func replyBodies(s string, n uint64) []any {
	return []any{
		&rtm.ErrorBody{Error: s, Reason: s, Position: s, SubscriptionID: s},
		&rtm.ErrorBody{Error: s, Reason: s},
		rtm.ErrorBody{Error: s, Reason: s, SubscriptionID: s},
		&rtm.SubscribeReply{Position: s, SubscriptionID: s},
		&rtm.UnsubscribeReply{Position: s, SubscriptionID: s},
		&rtm.SubscriptionInfo{Info: s, Reason: s, Position: s, SubscriptionID: s, MissedMessageCount: n},
		&rtm.SubscriptionError{Error: s, Reason: s, Position: s, SubscriptionID: s, MissedMessageCount: n},
		&rtm.SubscriptionError{Error: s, Reason: s, SubscriptionID: s, MissedMessageCount: n},
	}
}

// sameAsMarshal fails unless every reply body with strings s and count n
// encodes, in a PDU, to the bytes encoding/json's Marshal gives the body.
func sameAsMarshal(t *testing.T, s string, n uint64) {
	t.Helper()
	for _, body := range replyBodies(s, n) {
		want, err := stdjson.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		frame, err := c.AppendPDU(nil, &rtm.PDU{Action: "rtm/subscribe/error", ID: rtm.IntID(1), Body: body})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSuffix(strings.TrimPrefix(string(frame), `{"action":"rtm/subscribe/error","id":1,"body":`), "}")
		if got != string(want) {
			t.Fatalf("%T with %q encodes as %s, encoding/json as %s", body, s, got, want)
		}
	}
}

func TestRepliesAsMarshal(t *testing.T) {
	t.Parallel()
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	for _, s := range []string{"", "not_subscribed", `Invalid PDU: 'position' was invalid`, all.String(),
		"<script>&amp;</script>", "\b\f\n\r\t\x00\x1f\x7f\"\\/", "\u2028\u2029", "a\xffb\xc3", "😀\U0010ffff"} {
		sameAsMarshal(t, s, 1<<63+5)
	}
}

// FuzzReplies checks the bodies written by hand against encoding/json's
// Marshal for any strings and counts.
func FuzzReplies(f *testing.F) {
	f.Add("out_of_sync", uint64(3))
	f.Add("<\u2028\xff\b", uint64(0))
	f.Fuzz(func(t *testing.T, s string, n uint64) { sameAsMarshal(t, s, n) })
}

// BenchmarkReplies encodes the replies written by hand: an error reply
// and the reply to a subscribe.
func BenchmarkReplies(b *testing.B) {
	e := &rtm.Error{Code: rtm.CodeNotSubscribed, Reason: `no subscription "chat"`}
	for _, tc := range []struct {
		name string
		pdu  rtm.PDU
	}{
		{"Error", rtm.PDU{Action: "rtm/unsubscribe/error", ID: rtm.IntID(7), Body: e.Body()}},
		{"Subscribe", rtm.PDU{Action: "rtm/subscribe/ok", ID: rtm.IntID(7), Body: &rtm.SubscribeReply{Position: "1796126000799616:3", SubscriptionID: "chat"}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			buf, _ := c.AppendPDU(nil, &tc.pdu)
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.AppendPDU(buf[:0], &tc.pdu); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package msgpack_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func BenchmarkCodec(b *testing.B) { codectest.Bench(b, c) }

// BenchmarkDecodeBody decodes the bodies decoded most, as they arrive: a
// delivery of one 128-byte string to a client, a publish of one to the
// edge (also with every option: a compare-and-set write with a ttl, asking
// for the previous message), the acknowledgment of a publish and a
// subscribe with history. The body decoded into is reused, as only the
// decoding is measured.
func BenchmarkDecodeBody(b *testing.B) {
	msg := strings.Repeat("m", 128)
	b.Run("SubscriptionData", func(b *testing.B) {
		benchDecodeBody(b, &rtm.SubscriptionData{SubscriptionID: "chat", Position: "12345:67890", Messages: []any{msg}}, new(rtm.SubscriptionData))
	})
	b.Run("PublishBody", func(b *testing.B) {
		benchDecodeBody(b, &rtm.PublishBody{Channel: "chat", Message: msg}, new(rtm.PublishBody))
	})
	b.Run("PublishBodyOptions", func(b *testing.B) {
		ttl := int64(30)
		benchDecodeBody(b, &rtm.PublishBody{Channel: "chat", Message: msg, Position: "12345:67890", TTL: &ttl, TTLMessage: "gone", Read: rtm.ReadPrevious}, new(rtm.PublishBody))
	})
	b.Run("PositionBody", func(b *testing.B) {
		benchDecodeBody(b, &rtm.PositionBody{Position: "12345:67890"}, new(rtm.PositionBody))
	})
	b.Run("SubscribeBody", func(b *testing.B) {
		count := int64(10)
		benchDecodeBody(b, &rtm.SubscribeBody{Channel: "chat", SubscriptionID: "chat-1", History: &rtm.History{Count: &count}, FastForward: true},
			new(rtm.SubscribeBody))
	})
}

// benchDecodeBody decodes the body of a PDU carrying in into out, a
// pointer to a zero body of the same type, which it zeroes again before
// each decode.
func benchDecodeBody[T any](b *testing.B, in, out *T) {
	frame := codectest.Encode(b, c, &rtm.PDU{Action: "x/y", Body: in})
	env, err := c.Decode(frame)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(env.Body)))
	b.ReportAllocs()
	for b.Loop() {
		var zero T
		*out = zero
		if err := c.DecodeBody(env.Body, out); err != nil {
			b.Fatal(err)
		}
	}
}

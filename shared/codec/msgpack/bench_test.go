package msgpack_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func BenchmarkCodec(b *testing.B) { codectest.Bench(b, c) }

// BenchmarkDecodeBody decodes the bodies DecodeBody has fast paths for, as
// they arrive: a delivery of one 128-byte string to a client, a publish of
// one to the edge and the acknowledgment of a publish. The body decoded
// into is reused, as only the decoding is measured.
func BenchmarkDecodeBody(b *testing.B) {
	msg := strings.Repeat("m", 128)
	b.Run("SubscriptionData", func(b *testing.B) {
		benchDecodeBody(b, &rtm.SubscriptionData{SubscriptionID: "chat", Position: "12345:67890", Messages: []any{msg}}, new(rtm.SubscriptionData))
	})
	b.Run("PublishBody", func(b *testing.B) {
		benchDecodeBody(b, &rtm.PublishBody{Channel: "chat", Message: msg}, new(rtm.PublishBody))
	})
	b.Run("PositionBody", func(b *testing.B) {
		benchDecodeBody(b, &rtm.PositionBody{Position: "12345:67890"}, new(rtm.PositionBody))
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

// BenchmarkDecodeData reads a push of one 128-byte string as a client
// does: in one pass with DecodeData, and the long way (Decode, DecodeBody
// and parsing the position) that DecodeData saves.
func BenchmarkDecodeData(b *testing.B) {
	m, err := c.AppendValue(nil, strings.Repeat("m", 128))
	if err != nil {
		b.Fatal(err)
	}
	frame := c.AppendData(nil, "chat", rtm.Position{Epoch: 12345, Offset: 67890}, [][]byte{m})
	b.Run("OnePass", func(b *testing.B) {
		var d codec.Data
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if !c.DecodeData(frame, &d) {
				b.Fatal("refused")
			}
		}
	})
	b.Run("LongWay", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			env, err := c.Decode(frame)
			if err != nil {
				b.Fatal(err)
			}
			var d rtm.SubscriptionData
			if err := c.DecodeBody(env.Body, &d); err != nil {
				b.Fatal(err)
			}
			if _, err := rtm.ParsePosition(d.Position); err != nil {
				b.Fatal(err)
			}
		}
	})
}

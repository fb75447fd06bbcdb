package codectest

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Bench runs the codec benchmarks: a typical rtm/publish PDU (a small JSON
// object message) and a 16-message rtm/subscription/data PDU, each encoded
// and decoded.
func Bench(b *testing.B, c codec.Codec) {
	publish := &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(42), Body: &rtm.PublishBody{Channel: "chat", Message: Message()}}
	msgs := Messages(16)
	enc := EncodeAll(b, c, msgs)
	pos := rtm.Position{Epoch: 12345, Offset: 67890}
	data := &rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &rtm.SubscriptionData{
		SubscriptionID: "chat", Position: pos.String(), Messages: msgs,
	}}
	b.Run("PublishEncode", func(b *testing.B) { benchEncode(b, c, publish) })
	b.Run("PublishDecode", func(b *testing.B) {
		benchDecode(b, c, Encode(b, c, publish), func() any { return new(rtm.PublishBody) })
	})
	b.Run("MessageEncode", func(b *testing.B) {
		msg := Message()
		buf := Value(b, c, msg)
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = c.AppendValue(buf[:0], msg)
		}
	})
	b.Run("Data16EncodeTyped", func(b *testing.B) { benchEncode(b, c, data) })
	b.Run("Data16EncodeSpliced", func(b *testing.B) {
		buf := c.AppendData(nil, "chat", pos, enc)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			buf = c.AppendData(buf[:0], "chat", pos, enc)
		}
	})
	b.Run("Data16Decode", func(b *testing.B) {
		benchDecode(b, c, Encode(b, c, data), func() any { return new(rtm.SubscriptionData) })
	})
}

func benchEncode(b *testing.B, c codec.Codec, p *rtm.PDU) {
	buf := Encode(b, c, p)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = c.AppendPDU(buf[:0], p); err != nil {
			b.Fatal(err)
		}
	}
}

func benchDecode(b *testing.B, c codec.Codec, frame []byte, body func() any) {
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		env, err := c.Decode(frame)
		if err == nil {
			err = c.DecodeBody(env.Body, body())
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

package msgpack_test

import (
	"testing"

	shared "github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
	lean "github.com/sluicehq/sluice/wasm/internal/msgpack"
)

// BenchmarkDecodeData decodes a subscription data PDU of 20 small
// messages, the browser client's hot path.
func BenchmarkDecodeData(b *testing.B) {
	msgs := make([]any, 20)
	for i := range msgs {
		msgs[i] = map[string]any{"text": "hello, world", "user": "alice", "n": int64(i), "ok": true}
	}
	frame, err := shared.Codec{}.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionData,
		Body: &rtm.SubscriptionData{SubscriptionID: "chat", Position: "1:20", Messages: msgs}})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		env, err := lean.Codec{}.Decode(frame)
		if err != nil {
			b.Fatal(err)
		}
		var d rtm.SubscriptionData
		if err := (lean.Codec{}).DecodeBody(env.Body, &d); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodePublish encodes a publish request.
func BenchmarkEncodePublish(b *testing.B) {
	p := &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(7), Body: &rtm.PublishBody{Channel: "chat",
		Message: map[string]any{"text": "hello, world", "user": "alice", "n": int64(1), "ok": true}}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = (lean.Codec{}).AppendPDU(buf[:0], p); err != nil {
			b.Fatal(err)
		}
	}
}

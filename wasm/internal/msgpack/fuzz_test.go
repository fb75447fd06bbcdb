package msgpack_test

import (
	"reflect"
	"testing"

	shared "github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
	lean "github.com/sluicehq/sluice/wasm/internal/msgpack"
)

// FuzzDecode feeds arbitrary frames to the lean codec: it never panics,
// and a frame both codecs accept decodes to the same envelope and body.
// Every frame the shared codec encodes is accepted (TestCrossCodec).
func FuzzDecode(f *testing.F) {
	for _, s := range samples() {
		if pb, ok := s.pdu.Body.(*rtm.PublishBody); ok {
			delete(pb.Message.(map[string]any), "long") // small seeds mutate faster
		}
		if d, ok := s.pdu.Body.(*rtm.SubscriptionData); ok {
			delete(d.Messages[0].(map[string]any), "long")
		}
		frame, err := shared.Codec{}.AppendPDU(nil, &s.pdu)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(frame)
	}
	f.Add(unhex(f, "83"+actionA+id+"cf0000000000000007"+body+"82a76368616e6e656ca163"+msgKey+"83a166ca3f000000a175cfffffffffffffffffa162c4020102"))
	f.Add(unhex(f, "82"+actionA+body+"81"+msgKey+"d6ff00000001"))
	f.Fuzz(func(t *testing.T, frame []byte) {
		env, err := lean.Codec{}.Decode(frame)
		refEnv, refErr := shared.Codec{}.Decode(frame)
		if err != nil || refErr != nil {
			return
		}
		if env.Action != refEnv.Action || env.ID != refEnv.ID || string(env.Body) != string(refEnv.Body) {
			t.Fatalf("envelope %+v, shared %+v", env, refEnv)
		}
		var got, want any
		err = lean.Codec{}.DecodeBody(env.Body, &got)
		refErr = shared.Codec{}.DecodeBody(refEnv.Body, &want)
		if err == nil && refErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("body %#v, shared %#v", got, want)
		}
	})
}

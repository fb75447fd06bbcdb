package codectest

import (
	"bytes"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Seeds returns frames for a fuzz corpus: every sample PDU with each kind
// of id, data PDUs, and extra frames given by the codec's tests.
func Seeds(t testing.TB, c codec.Codec, extra ...[]byte) [][]byte {
	t.Helper()
	var seeds [][]byte
	ids := []rtm.ID{{}, rtm.IntID(7), rtm.StringID("7")}
	for i, p := range SamplePDUs() {
		seeds = append(seeds, Encode(t, c, &rtm.PDU{Action: p.Action, ID: ids[i%len(ids)], Body: p.Body}))
	}
	seeds = append(seeds, c.AppendData(nil, "s", rtm.Position{Epoch: 1, Offset: 2}, EncodeAll(t, c, Messages(5))))
	seeds = append(seeds, Value(t, c, map[string]any{"action": "rtm/publish"}))
	return append(seeds, extra...)
}

// Fuzz runs the decoder fuzz target of c: decoding never panics, every
// error is an *rtm.Error with the codec's parse code or invalid_format and
// a reason of package rtm (never a library's text), and whatever decodes
// re-encodes, decodes to the same action, id and body, and re-encodes to
// the same bytes.
func Fuzz(f *testing.F, c codec.Codec, parseCode rtm.Code, extra ...[]byte) {
	for _, s := range Seeds(f, c, extra...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		env, err := c.Decode(frame)
		if err != nil {
			if e, ok := rtm.AsError(err); !ok || (e.Code != parseCode && e.Code != rtm.CodeInvalidFormat) || !rtm.IsFormatReason(e.Reason) {
				t.Fatalf("Decode error %v, want an *rtm.Error with code %s or invalid_format and a reason of package rtm", err, parseCode)
			}
			return
		}
		for _, bt := range BodyTypes {
			v := bt.New()
			if err := c.DecodeBody(env.Body, v); err != nil {
				WantCode(t, err, rtm.CodeInvalidFormat)
				continue
			}
			reencode(t, c, env, bt, v)
		}
	})
}

func reencode(t *testing.T, c codec.Codec, env rtm.Envelope, bt BodyType, v any) {
	t.Helper()
	out, err := c.AppendPDU(nil, &rtm.PDU{Action: env.Action, ID: env.ID, Body: bt.Body(v)})
	if err != nil {
		t.Fatalf("re-encoding a decoded %s: %v", bt.Name, err)
	}
	env2, err := c.Decode(out)
	if err != nil {
		t.Fatalf("decoding re-encoded %s %q: %v", bt.Name, out, err)
	}
	if env2.Action != env.Action || env2.ID != env.ID {
		t.Fatalf("re-encoded %s decodes as %q %+v, want %q %+v", bt.Name, env2.Action, env2.ID, env.Action, env.ID)
	}
	v2 := bt.New()
	if err := c.DecodeBody(env2.Body, v2); err != nil {
		t.Fatalf("decoding re-encoded %s body %q: %v", bt.Name, env2.Body, err)
	}
	out2, err := c.AppendPDU(nil, &rtm.PDU{Action: env.Action, ID: env.ID, Body: bt.Body(v2)})
	if err != nil || !bytes.Equal(out, out2) {
		t.Fatalf("%s re-encodes as %q then %q (%v)", bt.Name, out, out2, err)
	}
}

package codec_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

var codecs = []codec.Codec{json.Codec{}, cbor.Codec{}, msgpack.Codec{}}

// crossValues are messages a publisher may send in any codec.
func crossValues() []struct {
	name string
	v    any
} {
	many := map[string]any{}
	for i := range 40 {
		many[fmt.Sprintf("key%02d", 39-i)] = int64(i)
	}
	long := make([]any, 300)
	for i := range long {
		long[i] = int64(i * i)
	}
	return []struct {
		name string
		v    any
	}{
		{"null", nil},
		{"true", true},
		{"false", false},
		{"zero", int64(0)},
		{"max int64", int64(math.MaxInt64)},
		{"min int64", int64(math.MinInt64)},
		{"max uint64", uint64(math.MaxUint64)},
		{"just above int64", uint64(math.MaxInt64) + 1},
		{"float", 3.25},
		{"integral float", 2.0},
		{"tiny float", 5e-324},
		{"huge float", 1.7976931348623157e308},
		{"negative float", -0.1},
		{"empty string", ""},
		{"unicode", "héllo wörld ✓ 日本語 😀 \U0010ffff"},
		{"escapes", "quote\" back\\ \n\t\x00\x1f \u2028 </script>"},
		{"long string", strings.Repeat("xyz", 30000)},
		{"binary", []byte{0, 1, 2, 0xfe, 0xff}},
		{"empty binary", []byte{}},
		{"empty array", []any{}},
		{"empty map", map[string]any{}},
		{"long array", long},
		{"many keys", many},
		{"nested", map[string]any{
			"user": map[string]any{"name": "Ann", "tags": []any{"a", "b"}, "age": int64(31)},
			"list": []any{int64(1), 2.5, nil, true, []any{map[string]any{"deep": []any{"x"}}}},
			"bin":  []byte("payload"),
			"":     "empty key",
			"ключ": -7.5,
		}},
		{"deepest", codectest.Deep(codec.MaxDepth)},
	}
}

// viaJSON is what a value becomes once it has crossed JSON: binary turns
// into a base64 string, the documented exception.
func viaJSON(v any) any {
	switch x := v.(type) {
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = viaJSON(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = viaJSON(e)
		}
		return out
	}
	return v
}

// published is what a subscriber's edge holds after a publisher sent v in
// codec c: the message decoded from c's rtm/publish PDU.
func published(t *testing.T, c codec.Codec, v any) any {
	t.Helper()
	frame := codectest.Encode(t, c, &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(1), Body: &rtm.PublishBody{Channel: "ch", Message: v}})
	var body rtm.PublishBody
	codectest.Decode(t, c, frame, &body)
	return body.Message
}

// TestCrossCodec publishes every value in every codec and delivers it in
// every codec: it arrives as the same value, and encodes to the same bytes
// whichever codec it came from.
func TestCrossCodec(t *testing.T) {
	t.Parallel()
	for _, tc := range crossValues() {
		t.Run(tc.name, func(t *testing.T) {
			for _, from := range codecs {
				got := published(t, from, tc.v)
				want := tc.v
				if from.Name() == "json" {
					want = viaJSON(tc.v)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("published in %s, decoded as %#v, want %#v", from.Name(), got, want)
				}
				for _, to := range codecs {
					deliverTo(t, to, from.Name(), got, tc.v)
				}
			}
		})
	}
}

func deliverTo(t *testing.T, to codec.Codec, from string, got, orig any) {
	t.Helper()
	want := orig
	if from == "json" || to.Name() == "json" {
		want = viaJSON(orig)
	}
	enc := codectest.Value(t, to, got)
	if ref := codectest.Value(t, to, want); !bytes.Equal(enc, ref) {
		t.Fatalf("%s→%s encodes as %q, the value itself as %q", from, to.Name(), enc, ref)
	}
	if recv := codectest.Received(t, to, enc); !reflect.DeepEqual(recv, want) {
		t.Fatalf("%s→%s received %#v, want %#v", from, to.Name(), recv, want)
	}
}

// TestIDEchoAcrossCodecs checks the two ids RTM distinguishes, 7 and "7",
// in every codec.
func TestIDEchoAcrossCodecs(t *testing.T) {
	t.Parallel()
	for _, c := range codecs {
		for _, id := range []rtm.ID{rtm.IntID(7), rtm.StringID("7")} {
			frame := codectest.Encode(t, c, &rtm.PDU{Action: rtm.ActionRead, ID: id, Body: &rtm.ReadBody{Channel: "c"}})
			env, err := c.Decode(frame)
			if err != nil || env.ID != id {
				t.Fatalf("%s: id %+v decoded as %+v (%v)", c.Name(), id, env.ID, err)
			}
		}
	}
}

// TestPositionBodyAsTheLibraryWritesIt: the acknowledgment body, written
// by hand, is byte for byte what each codec's library writes for a struct
// of the same shape, for every position; any other string decodes the same
// (encoding/json escapes <, > and & where the hand-written JSON does not).
func TestPositionBodyAsTheLibraryWritesIt(t *testing.T) {
	type libraryShape struct {
		Position string `json:"position"`
	}
	encode := func(c codec.Codec, body any) []byte {
		b, err := c.AppendPDU(nil, &rtm.PDU{Action: "rtm/publish/ok", ID: rtm.IntID(7), Body: body})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range codecs {
		for _, pos := range []string{"", "0:0", "1700000000:18446744073709551615", "é<&>\"\\"} {
			hand := encode(c, &rtm.PositionBody{Position: pos})
			lib := encode(c, &libraryShape{Position: pos})
			if _, err := rtm.ParsePosition(pos); err == nil && !bytes.Equal(hand, lib) {
				t.Errorf("%s, position %q: by hand %q, library %q", c.Name(), pos, hand, lib)
			}
			env, err := c.Decode(hand)
			if err != nil {
				t.Fatal(err)
			}
			var got rtm.PositionBody
			if err := c.DecodeBody(env.Body, &got); err != nil || got.Position != pos {
				t.Errorf("%s: position %q decodes as %q, %v", c.Name(), pos, got.Position, err)
			}
		}
	}
}

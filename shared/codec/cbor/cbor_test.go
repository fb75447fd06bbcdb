package cbor_test

import (
	"bytes"
	"encoding/hex"
	"math"
	"reflect"
	"testing"

	fxcbor "github.com/fxamacker/cbor/v2"

	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

var c = cbor.Codec{}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestConformance(t *testing.T) {
	codectest.Run(t, codectest.Spec{
		Codec:     c,
		ParseCode: rtm.CodeCBORParseError,
		Garbage: [][]byte{
			nil,
			unhex(t, "ff"),                       // break without an indefinite item
			unhex(t, "bf66616374696f6e6161ff"),   // indefinite-length map
			unhex(t, "a166616374696f6e7f6161ff"), // indefinite-length text
			unhex(t, "c1a0"),                     // a tag
			unhex(t, "a166616374"),               // truncated key
			unhex(t, "a000"),                     // trailing byte after a map
			unhex(t, "a0a0"),
			unhex(t, "9bffffffffffffffff"), // array longer than the limit
			unhex(t, "1c"),                 // reserved additional information
		},
	})
}

func TestName(t *testing.T) {
	if c.Name() != "cbor" || !c.Binary() {
		t.Fatalf("Name %q Binary %v, want cbor true", c.Name(), c.Binary())
	}
}

// TestLibraryFrames decodes frames as another CBOR encoder writes them:
// non-shortest integers and short floats.
func TestLibraryFrames(t *testing.T) {
	frame, err := fxcbor.Marshal(map[string]any{
		"action": "rtm/publish",
		"id":     uint8(9),
		"body": map[string]any{
			"channel": "c",
			"message": map[string]any{"f16": fxcbor.RawMessage{0xf9, 0x3e, 0x00}, "f32": float32(0.5), "u": uint64(math.MaxUint64), "n": int16(-3)},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got rtm.PublishBody
	env := codectest.Decode(t, c, frame, &got)
	want := map[string]any{"f16": 1.5, "f32": 0.5, "u": uint64(math.MaxUint64), "n": int64(-3)}
	if env.ID != rtm.IntID(9) || !reflect.DeepEqual(got.Message, want) {
		t.Fatalf("decoded id %+v message %#v, want 9 %#v", env.ID, got.Message, want)
	}
	// A non-shortest id: 0x1b followed by 8 bytes for 7.
	frame = unhex(t, "a2"+"66616374696f6e"+"6161"+"626964"+"1b0000000000000007")
	if env, err := c.Decode(frame); err != nil || env.ID != rtm.IntID(7) || string(env.Body) != "\xa0" {
		t.Fatalf("decoded %+v, %v; want id 7 and an empty body", env, err)
	}
}

func TestDecodeInvalidFormat(t *testing.T) {
	frames := map[string]string{
		"duplicate action": "a2" + "66616374696f6e" + "6161" + "66616374696f6e" + "6162",
		"integer key":      "a2" + "66616374696f6e" + "6161" + "01" + "a0",
		"invalid UTF-8":    "a1" + "66616374696f6e" + "61ff",
		"negative big id":  "a2" + "66616374696f6e" + "6161" + "626964" + "3b8000000000000000",
		"binary action":    "a1" + "66616374696f6e" + "4161",
	}
	for name, f := range frames {
		t.Run(name, func(t *testing.T) {
			_, err := c.Decode(unhex(t, f))
			codectest.WantCode(t, err, rtm.CodeInvalidFormat)
		})
	}
}

func TestDecodeBodyErrors(t *testing.T) {
	bodies := map[string]string{
		"wrong field type":  "a1" + "676368616e6e656c" + "05",
		"binary as string":  "a1" + "676368616e6e656c" + "4161",
		"integer map key":   "a1" + "676d657373616765" + "a10101",
		"huge negative":     "a1" + "676d657373616765" + "3bffffffffffffffff",
		"simple value":      "a1" + "676d657373616765" + "e0",
		"NaN":               "a1" + "676d657373616765" + "f97e00",
		"invalid UTF-8":     "a1" + "676d657373616765" + "62c328",
		"not a map":         "80",
		"tagged time":       "a1" + "676d657373616765" + "c11a514b67b0",
		"indefinite string": "a1" + "676d657373616765" + "7f6161ff",
	}
	for name, b := range bodies {
		t.Run(name, func(t *testing.T) {
			codectest.WantCode(t, c.DecodeBody(unhex(t, b), new(rtm.PublishBody)), rtm.CodeInvalidFormat)
		})
	}
	// undefined reads as null.
	var got rtm.PublishBody
	if err := c.DecodeBody(unhex(t, "a1"+"676d657373616765"+"f7"), &got); err != nil || got.Message != nil {
		t.Fatalf("undefined decoded as %#v, %v; want nil", got.Message, err)
	}
}

func TestAppendValueBytes(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"null", nil, "f6"},
		{"bools", []any{true, false}, "82f5f4"},
		{"small ints", []any{int64(0), int64(23), int64(24), int64(-1), int64(-25)}, "8500171818203818"},
		{"max uint64", uint64(math.MaxUint64), "1bffffffffffffffff"},
		{"min int64", int64(math.MinInt64), "3b7fffffffffffffff"},
		{"float", 1.5, "fb3ff8000000000000"},
		{"text", "ü", "62c3bc"},
		{"binary", []byte{1, 2}, "420102"},
		{"sorted map", map[string]any{"b": int64(1), "a": int64(2)}, "a2616102616201"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := hex.EncodeToString(codectest.Value(t, c, tc.v)); got != tc.want {
				t.Fatalf("AppendValue(%#v) = %s, want %s", tc.v, got, tc.want)
			}
		})
	}
	if _, err := c.AppendValue(nil, "\xff"); err == nil {
		t.Fatal("AppendValue accepted invalid UTF-8")
	}
	if _, err := c.AppendPDU(nil, &rtm.PDU{Action: "\xff"}); err == nil {
		t.Fatal("AppendPDU accepted an invalid UTF-8 action")
	}
}

// TestLibraryReads checks that the library, as a client links it, reads a
// hand-written frame as the same PDU.
func TestLibraryReads(t *testing.T) {
	frame := c.AppendData(nil, "s1", rtm.Position{Epoch: 1, Offset: 2}, [][]byte{codectest.Value(t, c, codectest.Message())})
	var got struct {
		Action string               `cbor:"action"`
		Body   rtm.SubscriptionData `cbor:"body"`
	}
	if err := fxcbor.Unmarshal(frame, &got); err != nil {
		t.Fatal(err)
	}
	if got.Action != rtm.ActionSubscriptionData || got.Body.Position != "1:2" || len(got.Body.Messages) != 1 {
		t.Fatalf("library read %+v", got)
	}
	if !bytes.Contains(frame, []byte("hello, world")) {
		t.Fatal("message not spliced in")
	}
}

// TestDecodeBodyKeyTwice checks that a key given twice in a body, or in a
// message map, is invalid_format as it is in the PDU and in JSON, instead
// of the library keeping one of the values quietly.
func TestDecodeBodyKeyTwice(t *testing.T) {
	t.Parallel()
	bodies := []struct {
		name string
		body []byte
	}{
		// {"channel":"a","channel":"b"}
		{"field", []byte{0xa2, 0x67, 'c', 'h', 'a', 'n', 'n', 'e', 'l', 0x61, 'a', 0x67, 'c', 'h', 'a', 'n', 'n', 'e', 'l', 0x61, 'b'}},
		// {"message":{"x":1,"x":2}}
		{"message key", []byte{0xa1, 0x67, 'm', 'e', 's', 's', 'a', 'g', 'e', 0xa2, 0x61, 'x', 0x01, 0x61, 'x', 0x02}},
	}
	for _, tc := range bodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var p rtm.PublishBody
			err := c.DecodeBody(tc.body, &p)
			codectest.WantCode(t, err, rtm.CodeInvalidFormat)
			if e, _ := rtm.AsError(err); e.Reason != "body has a key twice" {
				t.Fatalf("reason %q, want %q", e.Reason, "body has a key twice")
			}
		})
	}
}

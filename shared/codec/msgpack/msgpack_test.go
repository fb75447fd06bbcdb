package msgpack_test

import (
	"encoding/hex"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	vmsgpack "github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

var c = msgpack.Codec{}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Keys and values used to build frames by hand.
const (
	action  = "a6616374696f6e" // "action"
	actionA = action + "a161"  // "action": "a"
	body    = "a4626f6479"     // "body"
	id      = "a26964"         // "id"
	message = "a76d657373616765"
	channel = "a76368616e6e656c"
)

// More keys, in hex.
const (
	position = "a8706f736974696f6e"
	messages = "a86d65737361676573"
	subID    = "af737562736372697074696f6e5f6964"
	nan      = "cb7ff8000000000001"
)

func TestConformance(t *testing.T) {
	codectest.Run(t, codectest.Spec{
		Codec:     c,
		ParseCode: rtm.CodeInvalidFormat,
		Garbage: [][]byte{
			nil,
			unhex(t, "c1"),
			unhex(t, "81"+action+"c1"),
			unhex(t, "81"+actionA+"c0"),    // trailing byte
			unhex(t, "81"+action+"a2ffff"), // invalid UTF-8
			unhex(t, "82"+actionA+body+"81a178d40100"),   // fixext in the body
			unhex(t, "82"+actionA+body+"81a178c70101aa"), // ext8 in the body
			unhex(t, "82"+actionA+body+"dfffffffff"),     // a map far longer than the frame
			unhex(t, "82"+actionA+body+"dd7fffffff"),     // so is this array
			unhex(t, "81"+action+"db7fffffff61"),         // and this string
		},
	})
}

func TestName(t *testing.T) {
	if c.Name() != "msgpack" || !c.Binary() {
		t.Fatalf("Name %q Binary %v, want msgpack true", c.Name(), c.Binary())
	}
}

// TestLibraryFrames decodes frames as the library writes them by default:
// fixed-size integers, float32, maps of any.
func TestLibraryFrames(t *testing.T) {
	frame, err := vmsgpack.Marshal(map[string]any{
		"action": "rtm/publish",
		"id":     int64(9),
		"body": map[string]any{
			"channel": "c",
			"message": map[any]any{"f32": float32(0.5), "u": uint64(math.MaxUint64), "n": int16(-3), "b": []byte{7}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got rtm.PublishBody
	env := codectest.Decode(t, c, frame, &got)
	want := map[string]any{"f32": 0.5, "u": uint64(math.MaxUint64), "n": int64(-3), "b": []byte{7}}
	if env.ID != rtm.IntID(9) || !reflect.DeepEqual(got.Message, want) {
		t.Fatalf("decoded id %+v message %#v, want 9 %#v", env.ID, got.Message, want)
	}
	// An id written as uint64 and another as int8.
	for hexID, want := range map[string]rtm.ID{"cf0000000000000007": rtm.IntID(7), "d0f9": rtm.IntID(-7), "a137": rtm.StringID("7")} {
		env, err := c.Decode(unhex(t, "82"+actionA+id+hexID))
		if err != nil || env.ID != want || string(env.Body) != "\x80" {
			t.Fatalf("id %s decoded as %+v, %v; want %+v and an empty body", hexID, env, err, want)
		}
	}
}

func TestDecodeInvalidFormat(t *testing.T) {
	frames := map[string]string{
		"duplicate action": "82" + actionA + actionA,
		"integer key":      "82" + actionA + "01" + "80",
		"uint64 id":        "82" + actionA + id + "cfffffffffffffffff",
		"float id":         "82" + actionA + id + "cb401c000000000000",
		"binary action":    "81" + action + "c40161",
	}
	for name, f := range frames {
		t.Run(name, func(t *testing.T) {
			_, err := c.Decode(unhex(t, f))
			codectest.WantCode(t, err, rtm.CodeInvalidFormat)
		})
	}
}

func TestDecodeBody(t *testing.T) {
	bad := map[string]string{
		"wrong field type":     "81" + channel + "05",
		"invalid UTF-8 binary": "81" + channel + "c401ff",
		"integer map key":      "81" + message + "810101",
		"ext in message":       "81" + message + "d40100",
		"not a map":            "90",
		"extra data":           "80c0",
		"too deep":             "81" + message + strings.Repeat("91", 65) + "c0",
		"far too deep":         "81" + message + strings.Repeat("91", 100) + "c0",
	}
	for name, b := range bad {
		t.Run(name, func(t *testing.T) {
			codectest.WantCode(t, c.DecodeBody(unhex(t, b), new(rtm.PublishBody)), rtm.CodeInvalidFormat)
		})
	}
	// Some encoders write strings as binary; valid UTF-8 is accepted.
	var got rtm.PublishBody
	if err := c.DecodeBody(unhex(t, "81"+channel+"c40163"), &got); err != nil || got.Channel != "c" {
		t.Fatalf("binary channel decoded as %q, %v", got.Channel, err)
	}
	// A timestamp extension is refused rather than turned into a time.
	ts, err := vmsgpack.Marshal(map[string]any{"message": time.Unix(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	codectest.WantCode(t, c.DecodeBody(ts, new(rtm.PublishBody)), rtm.CodeInvalidFormat)
}

func TestAppendValueBytes(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"null and bools", []any{nil, true, false}, "93c0c3c2"},
		{"fixints", []any{int64(0), int64(127), int64(-1), int64(-32)}, "94007fffe0"},
		{"ints", []any{int64(128), int64(-33), int64(256), int64(-129), int64(70000), int64(-40000)}, "96cc80d0dfcd0100d1ff7fce00011170d2ffff63c0"},
		{"max uint64", uint64(math.MaxUint64), "cfffffffffffffffff"},
		{"min int64", int64(math.MinInt64), "d38000000000000000"},
		{"float", 1.5, "cb3ff8000000000000"},
		{"fixstr", "ü", "a2c3bc"},
		{"str8", strings.Repeat("a", 32), "d920" + strings.Repeat("61", 32)},
		{"binary", []byte{1, 2}, "c4020102"},
		{"sorted map", map[string]any{"b": int64(1), "a": int64(2)}, "82a16102a16201"},
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
	if _, err := c.AppendPDU(nil, &rtm.PDU{Action: "a", ID: rtm.StringID("\xff")}); err == nil {
		t.Fatal("AppendPDU accepted an invalid UTF-8 id")
	}
}

// TestLibraryReads checks that the library, as a Go client would use it,
// reads hand-written frames.
func TestLibraryReads(t *testing.T) {
	frame := c.AppendData(nil, "s1", rtm.Position{Epoch: math.MaxUint64, Offset: 2}, [][]byte{codectest.Value(t, c, codectest.Message())})
	var got map[string]any
	if err := vmsgpack.Unmarshal(frame, &got); err != nil {
		t.Fatal(err)
	}
	b, _ := got["body"].(map[string]any)
	if got["action"] != rtm.ActionSubscriptionData || b["position"] != "18446744073709551615:2" || b["subscription_id"] != "s1" {
		t.Fatalf("library read %#v", got)
	}
}

// TestDecodeBodyKeyTwice checks that a body giving a message key twice,
// on which the library panics, is invalid_format rather than a crash of
// the edge, and that the codec still decodes afterwards.
func TestDecodeBodyKeyTwice(t *testing.T) {
	tests := []struct {
		name string
		body string
		into any
	}{
		{name: "integers", body: "82" + message + "01" + message + "02", into: new(rtm.PublishBody)},
		{name: "map then integer", body: "82" + message + "81a16101" + message + "ff", into: new(rtm.PublishBody)},
		{name: "read reply", body: "82" + message + "58" + message + "ff", into: new(rtm.ReadReply)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			codectest.WantCode(t, c.DecodeBody(unhex(t, tt.body), tt.into), rtm.CodeInvalidFormat)
			var got rtm.PublishBody
			if err := c.DecodeBody(unhex(t, "82"+channel+"a163"+message+"01"), &got); err != nil || got.Channel != "c" || got.Message != int64(1) {
				t.Fatalf("next body decoded as %+v, %v", got, err)
			}
		})
	}
}

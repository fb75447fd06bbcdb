package json_test

import (
	stdjson "encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

var c = json.Codec{}

func TestConformance(t *testing.T) {
	codectest.Run(t, codectest.Spec{
		Codec:     c,
		ParseCode: rtm.CodeJSONParseError,
		Garbage: [][]byte{
			nil, []byte(" "), []byte("not json"), []byte("{"), []byte(`{"action":"a",}`),
			[]byte(`{"action":"a"} {}`), []byte("\xff"), []byte(`{"action":'a'}`), []byte("[1,]"),
		},
	})
}

func TestName(t *testing.T) {
	if c.Name() != "json" || c.Binary() {
		t.Fatalf("Name %q Binary %v, want json false", c.Name(), c.Binary())
	}
}

func TestDecodeFrames(t *testing.T) {
	cases := []struct {
		name   string
		frame  string
		action string
		id     rtm.ID
		body   string
	}{
		{"integer id", `{"action":"rtm/publish","id":7,"body":{}}`, "rtm/publish", rtm.IntID(7), "{}"},
		{"string id", `{"action":"rtm/publish","id":"7","body":{}}`, "rtm/publish", rtm.StringID("7"), "{}"},
		{"negative id", `{"action":"a","id":-9223372036854775808}`, "a", rtm.IntID(math.MinInt64), "{}"},
		{"escaped string id", `{"action":"a","id":"\u0037\n"}`, "a", rtm.StringID("7\n"), "{}"},
		{"no id", `{"body":{"x":[1,{"y":"}"}]},"action":"rtm/read"}`, "rtm/read", rtm.ID{}, `{"x":[1,{"y":"}"}]}`},
		{"whitespace", " \n{ \"action\" :\t\"a\" , \"body\" : { } }\r\n", "a", rtm.ID{}, "{ }"},
		{"escaped key", `{"\u0061ction":"a","bo\u0064y":{"k":1}}`, "a", rtm.ID{}, `{"k":1}`},
		{"escaped action", `{"action":"rtm\/publish\u00e9"}`, "rtm/publishé", rtm.ID{}, "{}"},
		{"unknown keys", `{"action":"a","extra":[{"action":1}],"more":"\"body\""}`, "a", rtm.ID{}, "{}"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, err := c.Decode([]byte(tc.frame))
			if err != nil {
				t.Fatal(err)
			}
			if env.Action != tc.action || env.ID != tc.id || string(env.Body) != tc.body {
				t.Fatalf("decoded %q %+v %q, want %q %+v %q", env.Action, env.ID, env.Body, tc.action, tc.id, tc.body)
			}
		})
	}
}

func TestDecodeInvalidFormat(t *testing.T) {
	frames := []string{
		`[]`, `"rtm/publish"`, `7`, `null`,
		`{"body":{}}`,
		`{"action":7}`,
		`{"action":"a","id":7.0}`,
		`{"action":"a","id":1e2}`,
		`{"action":"a","id":true}`,
		`{"action":"a","id":null}`,
		`{"action":"a","id":9223372036854775808}`,
		`{"action":"a","id":-9223372036854775809}`,
		`{"action":"a","body":[]}`,
		`{"action":"a","body":null}`,
		`{"action":"a","action":"b"}`,
		`{"action":"a","\u0061ction":"b"}`,
		`{"action":"a","id":1,"id":2}`,
		`{"action":"a","body":{},"body":{}}`,
	}
	for _, f := range frames {
		t.Run(f, func(t *testing.T) {
			_, err := c.Decode([]byte(f))
			codectest.WantCode(t, err, rtm.CodeInvalidFormat)
		})
	}
}

func TestDecodeBodyNumbers(t *testing.T) {
	body := `{"channel":"c","message":{"i":1,"neg":-9223372036854775808,"max":9223372036854775807,` +
		`"u":18446744073709551615,"big":18446744073709551616,"f":1.0,"e":1e2,"tiny":1e-400,"z":-0}}`
	var got rtm.PublishBody
	if err := c.DecodeBody([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"i": int64(1), "neg": int64(math.MinInt64), "max": int64(math.MaxInt64),
		"u": uint64(math.MaxUint64), "big": 18446744073709551616.0, "f": 1.0, "e": 100.0, "tiny": 0.0, "z": int64(0),
	}
	if !reflect.DeepEqual(got.Message, want) {
		t.Fatalf("decoded %#v, want %#v", got.Message, want)
	}
}

func TestDecodeBodyErrors(t *testing.T) {
	cases := []struct {
		name, body, reason string
	}{
		{"wrong field type", `{"channel":5}`, `"channel"`},
		{"not an object", `[1]`, "must be a map"},
		{"out of range", `{"channel":"c","message":[1e400]}`, "out of range"},
		{"trailing data", `{"channel":"c"} {}`, "extra data"},
		{"malformed", `{"channel":`, "JSON"},
		{"too deep", `{"message":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`, "deeper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.DecodeBody([]byte(tc.body), new(rtm.PublishBody))
			codectest.WantCode(t, err, rtm.CodeInvalidFormat)
			if e, _ := rtm.AsError(err); !strings.Contains(e.Reason, tc.reason) {
				t.Fatalf("reason %q does not mention %q", e.Reason, tc.reason)
			}
		})
	}
}

func TestAppendValueText(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"null", nil, "null"},
		{"bools", []any{true, false}, "[true,false]"},
		{"ints", []any{int64(math.MinInt64), uint64(math.MaxUint64)}, "[-9223372036854775808,18446744073709551615]"},
		{"integral float", 1.0, "1.0"},
		{"negative zero", math.Copysign(0, -1), "-0.0"},
		{"fraction", 0.1, "0.1"},
		{"large float", 1e21, "1e+21"},
		{"small float", 1e-7, "1e-7"},
		{"float below 1e21", 1e20, "100000000000000000000.0"},
		{"binary", []byte{0, 1, 2, 0xff}, `"AAEC/w=="`},
		{"sorted keys", map[string]any{"b": int64(1), "a": map[string]any{"d": nil, "c": "x"}}, `{"a":{"c":"x","d":null},"b":1}`},
		{"escapes", "q\" b\\ n\n r\r t\t \x00\x1f\x7f <>&", `"q\" b\\ n\n r\r t\t \u0000\u001f` + "\x7f" + ` <>&"`},
		{"js separators", "\u2028\u2029", `"\u2028\u2029"`},
		{"unicode", "héllo 😀", `"héllo 😀"`},
		{"invalid UTF-8", "a\xffb", `"a\ufffdb"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := string(codectest.Value(t, c, tc.v))
			if got != tc.want {
				t.Fatalf("AppendValue(%#v) = %s, want %s", tc.v, got, tc.want)
			}
			if !stdjson.Valid([]byte(got)) {
				t.Fatalf("%s is not valid JSON", got)
			}
		})
	}
}

// TestStringsRoundTrip checks the hand-written escaping against
// encoding/json's reading of it.
func TestStringsRoundTrip(t *testing.T) {
	var all strings.Builder
	for r := rune(0); r < 0x3000; r++ {
		all.WriteRune(r)
	}
	for _, s := range []string{all.String(), "😀\U0010ffff", `"\/`} {
		var got string
		if err := stdjson.Unmarshal(codectest.Value(t, c, s), &got); err != nil || got != s {
			t.Fatalf("string did not survive: %v", err)
		}
	}
}

func TestAppendPDUText(t *testing.T) {
	cases := []struct {
		name string
		pdu  rtm.PDU
		want string
	}{
		{"int id", rtm.PDU{Action: "rtm/publish/ok", ID: rtm.IntID(7), Body: &rtm.PositionBody{Position: "1:2"}},
			`{"action":"rtm/publish/ok","id":7,"body":{"position":"1:2"}}`},
		{"string id", rtm.PDU{Action: "rtm/publish/ok", ID: rtm.StringID("7"), Body: &rtm.PositionBody{Position: "1:2"}},
			`{"action":"rtm/publish/ok","id":"7","body":{"position":"1:2"}}`},
		{"no id nil body", rtm.PDU{Action: "auth/authenticate/ok"}, `{"action":"auth/authenticate/ok","body":{}}`},
		{"omitted fields", rtm.PDU{Action: "rtm/subscribe", Body: &rtm.SubscribeBody{Channel: "c"}},
			`{"action":"rtm/subscribe","body":{"channel":"c"}}`},
		{"publish", rtm.PDU{Action: "rtm/publish", Body: rtm.PublishBody{Channel: "c", Message: map[string]any{"n": 2.0}}},
			`{"action":"rtm/publish","body":{"channel":"c","message":{"n":2.0}}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(codectest.Encode(t, c, &tc.pdu)); got != tc.want {
				t.Fatalf("AppendPDU = %s, want %s", got, tc.want)
			}
		})
	}
}

package json_test

import (
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

// fastTypes are the body types with a fast path.
var fastTypes = []codectest.BodyType{}

func init() {
	for _, bt := range codectest.BodyTypes {
		switch bt.Name {
		case "PublishBody", "ChannelBody", "ReadBody", "SubscribeBody", "UnsubscribeBody",
			"PositionBody", "ReadReply", "SubscriptionData":
			fastTypes = append(fastTypes, bt)
		}
	}
}

// sameAsLibrary decodes body into every body type, with DecodeBody and
// with its library path alone, and fails unless both give the same value
// or the same error (code and reason).
func sameAsLibrary(t *testing.T, body []byte) {
	t.Helper()
	for _, bt := range codectest.BodyTypes {
		got, want := bt.New(), bt.New()
		gotErr, wantErr := c.DecodeBody(body, got), json.DecodeBodyLibrary(body, want)
		if !sameError(gotErr, wantErr) {
			t.Fatalf("%s of %.200q: DecodeBody error %v, library %v", bt.Name, body, gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s of %.200q: DecodeBody gives %.300v, library %.300v", bt.Name, body, got, want)
		}
	}
}

func sameError(a, b error) bool {
	if a == nil || b == nil {
		return a == b
	}
	ea, okA := rtm.AsError(a)
	eb, okB := rtm.AsError(b)
	if okA != okB {
		return false
	}
	if okA {
		return ea.Code == eb.Code && ea.Reason == eb.Reason
	}
	return a.Error() == b.Error()
}

// sameFrameAsLibrary fails unless Decode and its library path alone give
// the same envelope, or the same error, for frame.
func sameFrameAsLibrary(t *testing.T, frame []byte) {
	t.Helper()
	got, gotErr := c.Decode(frame)
	want, wantErr := json.DecodeFrameLibrary(frame)
	if !sameError(gotErr, wantErr) {
		t.Fatalf("Decode of %.200q: error %v, library %v", frame, gotErr, wantErr)
	}
	if got.Action != want.Action || got.ID != want.ID || string(got.Body) != string(want.Body) {
		t.Fatalf("Decode of %.200q: %q %+v %.100q, library %q %+v %.100q", frame, got.Action, got.ID, got.Body, want.Action, want.ID, want.Body)
	}
}

// fastFrames are frames the fast path of Decode must split itself.
var fastFrames = []string{
	`{"action":"rtm/publish","id":7,"body":{"channel":"c","message":{"a":[1,2.5e-3,"\u00e9\n",null,true,false]}}}`,
	`{"action":"rtm/publish","body":{"channel":"c","message":"hi"}}`,
	`{"body":{"x":[1,{"y":"}"}]},"id":"req-1","action":"rtm/read"}`,
	" \n{ \"action\" :\t\"a\" , \"body\" : { } }\r\n",
	`{"action":"a","id":-9223372036854775808}`,
	`{"action":"a","extra":[{"action":1}],"more":"\"body\"","x":{"\u0079":0}}`,
	`{"action":"rtm/subscribe","id":1,"body":{"channel":"c","history":{"count":1}}}`,
	`{"action":"é😀","id":"é"}`,
}

// TestFastEnvelopeTaken checks that the fast path of Decode splits the
// frames clients send itself, as the library path does.
func TestFastEnvelopeTaken(t *testing.T) {
	t.Parallel()
	for _, frame := range fastFrames {
		got, ok := json.DecodeEnvelopeFast([]byte(frame))
		if !ok {
			t.Fatalf("fast path refused %s", frame)
		}
		want, err := json.DecodeFrameLibrary([]byte(frame))
		if err != nil || got.Action != want.Action || got.ID != want.ID || string(got.Body) != string(want.Body) {
			t.Fatalf("fast path splits %s as %q %+v %q, library %q %+v %q (%v)", frame, got.Action, got.ID, got.Body, want.Action, want.ID, want.Body, err)
		}
	}
}

// TestFastEnvelopeLeavesToLibrary checks frames the fast path of Decode
// must leave to the library path, which splits or refuses them.
func TestFastEnvelopeLeavesToLibrary(t *testing.T) {
	t.Parallel()
	frames := []string{
		``, ` `, `[]`, `null`, `{"action":"a"} {}`, `{"action":"a",}`, "\xff", `{"action":'a'}`,
		`{"\u0061ction":"a"}`, `{"action":"a","\u0078":1}`, `{"action":"rtm\/publish"}`, `{"action":"a","id":"\u0037"}`,
		`{"action":"a","id":7.0}`, `{"action":"a","id":true}`, `{"action":"a","id":9223372036854775808}`,
		`{"action":"a","action":"b"}`, `{"action":7}`, `{"body":{}}`, `{"action":"a","body":[]}`,
		"{\"action\":\"a\xff\"}", `{"action":"a","x":"\q"}`,
		`{"action":"a","x":01}`, `{"action":"a","x":[1,]}`, `{"action":"a","x":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
	}
	for _, frame := range frames {
		if _, ok := json.DecodeEnvelopeFast([]byte(frame)); ok {
			t.Fatalf("fast path split %.100q, want it left to the library", frame)
		}
		sameFrameAsLibrary(t, []byte(frame))
	}
}

// fastBodies are bodies the fast paths must decode themselves, into the
// type named, to what the library gives.
var fastBodies = []struct {
	name, into, body string
}{
	{"publish", "PublishBody", `{"channel":"chat","message":{"text":"hello, world","user":"alice","n":42,"ok":true}}`},
	{"publish, message first", "PublishBody", `{"message":"hi","channel":"chat"}`},
	{"publish with space", "PublishBody", " \r\n\t{ \"channel\" : \"c\" , \"message\" : [ 1 , 2 ] } \n"},
	{"publish null", "PublishBody", `{"channel":"c","message":null}`},
	{"publish no message", "PublishBody", `{"channel":"c"}`},
	{"null channel", "PublishBody", `{"channel":null,"message":1}`},
	{"empty", "PublishBody", `{}`},
	{"numbers", "PublishBody", `{"channel":"c","message":[0,-0,1,-1,9223372036854775807,-9223372036854775808,` +
		`9223372036854775808,18446744073709551615,18446744073709551616,-9223372036854775809,` +
		`0.5,-1.25e-3,1E2,1e+2,1.0,1e-400,2.2250738585072014e-308,1.7976931348623157e308]}`},
	{"strings", "PublishBody", `{"channel":"c\u00e9\/\"","message":["", "é😀", "\n\t\r\b\f\\\/\"", "\u0000\u001f\u2028", "\ud83d\ude00", "a\u00E9b"]}`},
	{"nested", "PublishBody", `{"channel":"c","message":{"a":{"b":[{"c":[[],{}]}]},"e":{},"f":[]}}`},
	{"deepest", "PublishBody", `{"channel":"c","message":` + strings.Repeat("[", codec.MaxDepth) + strings.Repeat("]", codec.MaxDepth) + `}`},
	{"many keys", "PublishBody", `{"channel":"c","message":{` + manyKeys(40) + `}}`},
	{"long strings", "PublishBody", `{"channel":"c","message":["` + strings.Repeat("x", 10000) + `","` + strings.Repeat("é", 3000) + `"]}`},
	{"delete", "ChannelBody", `{"channel":"c"}`},
	{"read", "ReadBody", `{"channel":"c","position":"1:2"}`},
	{"read latest", "ReadBody", `{"channel":"c"}`},
	{"subscribe", "SubscribeBody", `{"channel":"c","subscription_id":"s","position":"1:2","history":{"count":10,"age":60},` +
		`"fast_forward":true,"force":false,"filter":"select * from c","period":1,"batch":-3}`},
	{"subscribe nulls", "SubscribeBody", `{"channel":"c","history":{"count":null,"age":null},"fast_forward":null,"period":null,"position":null}`},
	{"subscribe null history", "SubscribeBody", `{"channel":"c","history":null}`},
	{"subscribe empty history", "SubscribeBody", `{"channel":"c","history":{}}`},
	{"unsubscribe", "UnsubscribeBody", `{"subscription_id":"s"}`},
	{"ack", "PositionBody", `{"position":"1796126000799616:3"}`},
	{"read reply", "ReadReply", `{"position":"1:2","message":{"k":[true,false,null]}}`},
	{"data", "SubscriptionData", `{"subscription_id":"s","position":"1:3","messages":[1,"two",{"three":3}]}`},
	{"data deepest", "SubscriptionData", `{"messages":[` + strings.Repeat("[", codec.MaxDepth) + strings.Repeat("]", codec.MaxDepth) + `]}`},
	{"data null messages", "SubscriptionData", `{"subscription_id":"s","messages":null}`},
	{"data no messages", "SubscriptionData", `{"subscription_id":"s","messages":[]}`},
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(`":`)
		b.WriteString(strings.Repeat("1", i%19+1))
	}
	return b.String()
}

// TestFastPathTaken checks that the fast paths decode the bodies clients
// send themselves, and to what the library path gives: the differential
// test alone would pass if they left everything to the library.
func TestFastPathTaken(t *testing.T) {
	t.Parallel()
	for _, tc := range fastBodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bt := bodyType(t, tc.into)
			got, want := bt.New(), bt.New()
			if err := json.DecodeFast([]byte(tc.body), got); err != nil {
				t.Fatalf("fast path refused %.200s: %v", tc.body, err)
			}
			if err := json.DecodeBodyLibrary([]byte(tc.body), want); err != nil {
				t.Fatalf("library refused %.200s: %v", tc.body, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("fast path gives %#v, library %#v", got, want)
			}
			sameAsLibrary(t, []byte(tc.body))
		})
	}
}

func bodyType(t *testing.T, name string) codectest.BodyType {
	t.Helper()
	for _, bt := range fastTypes {
		if bt.Name == name {
			return bt
		}
	}
	t.Fatalf("no fast body type %s", name)
	return codectest.BodyType{}
}

// leftToLibrary are bodies the fast paths must leave to the library path,
// which decodes or refuses them (with its own reasons).
var leftToLibrary = []struct{ name, body string }{
	{"unknown key", `{"channel":"c","message":1,"ttl":5}`},
	{"exclude_self", `{"channel":"c","message":1,"exclude_self":true}`},
	{"a future option", `{"channel":"c","prefix":true,"only":"value_changes"}`},
	{"other case", `{"Channel":"c","message":1}`},
	{"escaped key", `{"\u0063hannel":"c","message":1}`},
	{"key twice", `{"channel":"a","channel":"b"}`},
	{"message key twice", `{"channel":"c","message":{"a":1,"a":2}}`},
	{"too deep", `{"channel":"c","message":` + strings.Repeat("[", codec.MaxDepth+1) + strings.Repeat("]", codec.MaxDepth+1) + `}`},
	{"out of range", `{"channel":"c","message":1e400}`},
	{"lone surrogate", `{"channel":"c","message":"\ud800x"}`},
	{"reversed surrogates", `{"channel":"c","message":"\ude00\ud83d"}`},
	{"invalid UTF-8", "{\"channel\":\"c\xff\"}"},
	{"control character", "{\"channel\":\"c\x01\"}"},
	{"wrong type", `{"channel":5}`},
	{"fractional integer", `{"channel":"c","period":1.0}`},
	{"integer out of range", `{"channel":"c","batch":9223372036854775808}`},
	{"string bool", `{"channel":"c","force":"true"}`},
	{"not an object", `["channel","c"]`},
	{"null body", `null`},
	{"trailing data", `{"channel":"c"} {}`},
	{"trailing NUL", "{\"channel\":\"c\"}\x00"},
	{"truncated", `{"channel":"c","message":[1,2`},
	{"trailing comma", `{"channel":"c",}`},
	{"bad number", `{"channel":"c","message":01}`},
	{"bad literal", `{"channel":"c","message":nul}`},
	{"bad escape", `{"channel":"c\x"}`},
	{"history unknown key", `{"channel":"c","history":{"count":1,"size":2}}`},
	{"empty", ``},
}

func TestFastPathLeavesToLibrary(t *testing.T) {
	t.Parallel()
	for _, tc := range leftToLibrary {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, bt := range fastTypes {
				if err := json.DecodeFast([]byte(tc.body), bt.New()); !errors.Is(err, json.ErrLibrary) {
					t.Fatalf("fast path into %s gives %v, want it left to the library", bt.Name, err)
				}
			}
			sameAsLibrary(t, []byte(tc.body))
		})
	}
}

// TestFastPathKeepsFilledBodies checks that a body decoded into a value
// that is not zero goes to the library, which decodes into what is there.
func TestFastPathKeepsFilledBodies(t *testing.T) {
	t.Parallel()
	b := &rtm.PublishBody{Channel: "old"}
	if err := json.DecodeFast([]byte(`{"message":1}`), b); !errors.Is(err, json.ErrLibrary) {
		t.Fatalf("fast path into a filled body gives %v, want it left to the library", err)
	}
	if err := c.DecodeBody([]byte(`{"message":1}`), b); err != nil || b.Channel != "old" || b.Message != int64(1) {
		t.Fatalf("DecodeBody into a filled body gives %+v, %v", b, err)
	}
}

// TestFastPathStrings checks that message strings, which share one
// buffer, hold their own text however the buffer was filled.
func TestFastPathStrings(t *testing.T) {
	t.Parallel()
	body := `{"channel":"c","message":{"a":"x\ny","b":"` + strings.Repeat("z", 5000) + `","c":"\u00e9","d":""}}`
	var b rtm.PublishBody
	if err := c.DecodeBody([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": "x\ny", "b": strings.Repeat("z", 5000), "c": "é", "d": ""}
	if !reflect.DeepEqual(b.Message, want) {
		t.Fatalf("decoded %q, want %q", b.Message, want)
	}
}

// TestFastPathManyStrings checks message strings past the first block of
// string headers and bytes, which later chunks hold, across a collection:
// each keeps its own text, and the interfaces holding them work as any
// string's.
func TestFastPathManyStrings(t *testing.T) {
	t.Parallel()
	var want []any
	var body strings.Builder
	body.WriteString(`{"channel":"c","message":[`)
	for i := range 100 {
		s := strings.Repeat(string(rune('a'+i%26)), i*7) + "é"
		if i > 0 {
			body.WriteByte(',')
		}
		body.WriteString(`"` + s + `"`)
		want = append(want, s)
	}
	body.WriteString(`]}`)
	var b rtm.PublishBody
	if err := json.DecodeFast([]byte(body.String()), &b); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	got := b.Message.([]any)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded strings differ")
	}
	for i, v := range got {
		if s, ok := v.(string); !ok || s != want[i] || v != want[i] {
			t.Fatalf("message %d is %T %q, want %q", i, v, v, want[i])
		}
	}
}

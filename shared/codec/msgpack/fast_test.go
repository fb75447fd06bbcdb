//go:build !js

package msgpack_test

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	vmsgpack "github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Satori's options of a publish, in hex.
const (
	ttl        = "a374746c"
	ttlMessage = "ab74746c5f6d657373616765"
	read       = "a472656164"
)

// fastBody is a body type with a fast path.
type fastBody struct {
	name string
	new  func() any
	// field is the key of its message values, if it has any.
	field string
}

var fastBodies = []fastBody{
	{"SubscriptionData", func() any { return new(rtm.SubscriptionData) }, "messages"},
	{"PublishBody", func() any { return new(rtm.PublishBody) }, "message"},
	{"PositionBody", func() any { return new(rtm.PositionBody) }, ""},
}

func ptr[T any](v T) *T { return &v }

// refusal is an invalid_format with reason, for a body decoded into the
// type named into, or into every type if into is empty.
type refusal struct{ into, reason string }

// fastCases are bodies on which the library behaves in ways the fast
// paths must reproduce; want is what DecodeBody gives: a body, for a body
// decoded into its type, or a refusal.
var fastCases = []struct {
	name string
	body string
	want any
}{
	{"empty map", "80", &rtm.PositionBody{}},
	{"string as binary", "81" + position + "c403313a32", &rtm.PositionBody{Position: "1:2"}},
	{"nil string", "81" + channel + "c0", &rtm.PublishBody{}},
	{"nil after a string", "82" + channel + "a161" + channel + "c0", &rtm.PublishBody{}},
	{"string given twice", "82" + channel + "a161" + channel + "a162", &rtm.PublishBody{Channel: "b"}},
	{"binary key", "81c408706f736974696f6e" + "a131", &rtm.PositionBody{Position: "1"}},
	{"nil key", "82c001" + position + "a131", &rtm.PositionBody{Position: "1"}},
	{"binary key not UTF-8", "82c401ff01" + position + "a131", &rtm.PositionBody{Position: "1"}},
	{"unknown keys", "83a178" + "91c3" + position + "a131" + "a179" + "81a17a" + nan, &rtm.PositionBody{Position: "1"}},
	{"unknown key holding what the library refuses in a message", "82a178" + "810101" + position + "a131", &rtm.PositionBody{Position: "1"}},
	{"map16 body", "de0001" + position + "a131", &rtm.PositionBody{Position: "1"}},
	{"no messages", "81" + subID + "a173", &rtm.SubscriptionData{SubscriptionID: "s"}},
	{"nil messages", "81" + messages + "c0", &rtm.SubscriptionData{}},
	{"empty messages", "81" + messages + "90", &rtm.SubscriptionData{Messages: []any{}}},
	{"messages given twice", "82" + messages + "91c0" + messages + "9101", &rtm.SubscriptionData{Messages: []any{int64(1)}}},
	{"message given twice", "82" + message + "c0" + message + "02", &rtm.PublishBody{Message: int64(2)}},
	{"exclude_self, for the library", "83" + channel + "a163" + message + "01" + "ac6578636c7564655f73656c66c3",
		&rtm.PublishBody{Channel: "c", Message: int64(1), ExcludeSelf: true}},
	{"nil message", "81" + message + "c0", &rtm.PublishBody{}},
	{"message values", "81" + message + "86a0ca3f000000a162c2a16ec0a175cfffffffffffffffffa178d0ffc40179c0", &rtm.PublishBody{Message: map[string]any{
		"": 0.5, "b": false, "n": nil, "u": uint64(math.MaxUint64), "x": int64(-1), "y": nil,
	}}},
	{"nil map key in a message", "81" + message + "81c001", &rtm.PublishBody{Message: map[string]any{"": int64(1)}}},
	{"map key given twice", "81" + message + "82a161" + nan + "a16101", &rtm.PublishBody{Message: map[string]any{"a": int64(1)}}},
	{"binary message", "81" + message + "c400", &rtm.PublishBody{Message: []byte{}}},
	{"deepest message", "81" + messages + "91" + strings.Repeat("91", codec.MaxDepth) + "a4636f7265", &rtm.SubscriptionData{Messages: []any{codectest.Deep(codec.MaxDepth)}}},

	{"data naming its channel", "82" + subID + "a173" + "a76368616e6e656c" + "a163", &rtm.SubscriptionData{SubscriptionID: "s", Channel: "c"}},
	// Satori's options, read as the library reads them.
	{"publish with ttl", "83" + channel + "a161" + message + "01" + "a374746c" + "05", &rtm.PublishBody{Channel: "a", Message: int64(1), TTL: ptr(int64(5))}},
	{"publish with read", "82" + message + "01" + "a472656164" + "a170", &rtm.PublishBody{Message: int64(1), Read: "p"}},
	{"write with position", "82" + position + "a3313a32" + message + "c0", &rtm.PublishBody{Position: "1:2"}},
	{"ttl_message", "81" + ttlMessage + "81a16101", &rtm.PublishBody{TTLMessage: map[string]any{"a": int64(1)}}},
	{"every option", "86" + channel + "a161" + message + "01" + position + "a3313a32" + ttl + "d0fb" + ttlMessage + "a178" + read + "a474727565",
		&rtm.PublishBody{Channel: "a", Message: int64(1), Position: "1:2", TTL: ptr(int64(-5)), TTLMessage: "x", Read: "true"}},
	{"nil ttl", "81" + ttl + "c0", &rtm.PublishBody{}},
	{"ttl, then nil", "82" + ttl + "05" + ttl + "c0", &rtm.PublishBody{}},
	{"ttl given twice", "82" + ttl + "05" + ttl + "cd0100", &rtm.PublishBody{TTL: ptr(int64(256))}},
	{"ttl wraps as in the library", "81" + ttl + "cfffffffffffffffff", &rtm.PublishBody{TTL: ptr(int64(-1))}},
	{"ttl int64", "81" + ttl + "d38000000000000000", &rtm.PublishBody{TTL: ptr(int64(math.MinInt64))}},
	{"ttl_message given twice", "82" + ttlMessage + "c0" + ttlMessage + "02", &rtm.PublishBody{TTLMessage: int64(2)}},
	{"nil options", "83" + position + "c0" + ttlMessage + "c0" + read + "c0", &rtm.PublishBody{}},
	{"read as binary", "81" + read + "c40474727565", &rtm.PublishBody{Read: "true"}},
	{"float ttl", "81" + ttl + "cb4014000000000000", refusal{"PublishBody", `body field "ttl" has the wrong type (number)`}},
	{"float32 ttl", "81" + ttl + "ca40a00000", refusal{"PublishBody", `body field "ttl" has the wrong type (number)`}},
	{"string ttl", "81" + ttl + "a135", refusal{"PublishBody", `body field "ttl" has the wrong type (string)`}},
	{"bool ttl", "81" + ttl + "c3", refusal{"PublishBody", `body field "ttl" has the wrong type (bool)`}},
	{"array ttl", "81" + ttl + "9101", refusal{"PublishBody", `body field "ttl" has the wrong type (array)`}},
	{"binary ttl", "81" + ttl + "c40105", refusal{"PublishBody", `body field "ttl" has the wrong type (binary)`}},
	{"extension ttl", "81" + ttl + "d40105", refusal{"", "body is not valid msgpack: extension types are not supported"}},
	{"truncated ttl", "81" + ttl + "cd01", refusal{"", "body is not valid msgpack: truncated"}},
	{"integer read", "81" + read + "01", refusal{"PublishBody", `body field "read" has the wrong type (number)`}},
	{"map position of a write", "81" + position + "80", refusal{"PublishBody", `body field "position" has the wrong type (map)`}},
	{"wrong ttl before the channel's", "82" + ttl + "a0" + channel + "01", refusal{"PublishBody", `body field "channel" has the wrong type (number)`}},
	{"ttl_message given twice, not nil first", "82" + ttlMessage + "01" + ttlMessage + "02", refusal{"PublishBody", "body does not have the fields and types its action needs"}},
	{"read as binary not UTF-8", "81" + read + "c401ff", refusal{"PublishBody", "body strings must be valid UTF-8"}},
	{"NaN ttl_message", "81" + ttlMessage + nan, refusal{"PublishBody", codec.NonFiniteError().Reason}},
	{"ttl_message too deep", "81" + ttlMessage + strings.Repeat("91", codec.MaxDepth+1) + "c0", refusal{"PublishBody", codec.TooDeepError().Reason}},

	{"not a map", "91a131", refusal{"", "body must be a map"}},
	{"nil body", "c0", refusal{"", "body must be a map"}},
	{"not a map, then extra data", "01c0", refusal{"", "body is not valid msgpack: extra data after the item"}},
	{"extra data", "80c0", refusal{"", "body is not valid msgpack: extra data after the item"}},
	{"empty", "", refusal{"", "body is not valid msgpack: truncated"}},
	{"truncated", "82" + position + "a131", refusal{"", "body is not valid msgpack: truncated"}},
	{"forged length", "81" + messages + "ddffffffff", refusal{"", "body is not valid msgpack: truncated"}},
	{"reserved byte", "81" + message + "c1", refusal{"", "body is not valid msgpack: reserved type byte 0xc1"}},
	{"extension", "81" + message + "d6ff00000001", refusal{"", "body is not valid msgpack: extension types are not supported"}},
	{"extension key", "81d40100c0", refusal{"", "body is not valid msgpack: extension types are not supported"}},
	{"invalid UTF-8", "81" + message + "a1ff", refusal{"", "body is not valid msgpack: string is not valid UTF-8"}},
	{"invalid UTF-8 key", "81a1ff01", refusal{"", "body is not valid msgpack: string is not valid UTF-8"}},
	{"too deep to scan", "81" + message + strings.Repeat("91", 72) + "c0", refusal{"", "body is not valid msgpack: nested too deeply"}},
	{"wrong type before a malformed item", "82" + channel + "01" + message + "c1", refusal{"", "body is not valid msgpack: reserved type byte 0xc1"}},
	{"integer channel", "81" + channel + "05", refusal{"PublishBody", `body field "channel" has the wrong type (number)`}},
	{"map position", "81" + position + "80", refusal{"PositionBody", `body field "position" has the wrong type (map)`}},
	{"map messages", "81" + messages + "80", refusal{"SubscriptionData", `body field "messages" has the wrong type (map)`}},
	{"string messages", "81" + messages + "a0", refusal{"SubscriptionData", `body field "messages" has the wrong type (string)`}},
	{"integer key", "8101c0", refusal{"", "body does not have the fields and types its action needs"}},
	{"array key", "8190c0", refusal{"", "body does not have the fields and types its action needs"}},
	{"integer map key in a message", "81" + message + "810101", refusal{"PublishBody", "body does not have the fields and types its action needs"}},
	{"message given twice", "82" + message + "01" + message + "c0", refusal{"PublishBody", "body does not have the fields and types its action needs"}},
	{"messages given twice", "82" + messages + "9101" + messages + "9102", refusal{"SubscriptionData", "body does not have the fields and types its action needs"}},
	{"wrong type before invalid binary", "82" + position + "c401ff" + channel + "01", refusal{"PublishBody", `body field "channel" has the wrong type (number)`}},
	{"wrong type after a NaN", "82" + message + nan + channel + "01", refusal{"PublishBody", "body does not have the fields and types its action needs"}},
	{"binary string not UTF-8", "81" + position + "c401ff", refusal{"PositionBody", "body strings must be valid UTF-8"}},
	{"binary string not UTF-8 before a NaN", "82" + channel + "c401ff" + message + nan, refusal{"PublishBody", "body strings must be valid UTF-8"}},
	{"NaN", "81" + message + nan, refusal{"PublishBody", codec.NonFiniteError().Reason}},
	{"float32 infinity", "81" + messages + "92c0ca7f800000", refusal{"SubscriptionData", codec.NonFiniteError().Reason}},
	{"binary map key not UTF-8", "81" + message + "81c401ff01", refusal{"PublishBody", codec.KeyError().Reason}},
	{"message too deep", "81" + message + strings.Repeat("91", codec.MaxDepth+1) + "c0", refusal{"PublishBody", codec.TooDeepError().Reason}},
	{"messages too deep", "81" + messages + "92c0" + strings.Repeat("91", codec.MaxDepth+1) + "c0", refusal{"SubscriptionData", codec.TooDeepError().Reason}},
}

// TestDecodeBodyFastPath decodes each of fastCases into each body type
// with a fast path, through DecodeBody and through the library path: the
// outcomes are the same, and the one expected for the case's body type.
func TestDecodeBodyFastPath(t *testing.T) {
	t.Parallel()
	for _, tc := range fastCases {
		for _, bt := range fastBodies {
			t.Run(tc.name+"/"+bt.name, func(t *testing.T) {
				t.Parallel()
				got, err := sameOutcome(t, unhex(t, tc.body), bt)
				switch want := tc.want.(type) {
				case refusal:
					if want.into != "" && want.into != bt.name {
						return // only compared
					}
					if e, _ := rtm.AsError(err); e == nil || e.Reason != want.reason {
						t.Fatalf("error %v, want %q", err, want.reason)
					}
				default:
					if reflect.TypeOf(want) != reflect.TypeOf(got) {
						return // a body of another type, only compared
					}
					if err != nil || !reflect.DeepEqual(got, want) {
						t.Fatalf("decoded %#v (%v), want %#v", got, err, want)
					}
				}
			})
		}
	}
}

// TestDecodeBodyFastPathOptions checks that a publish with every option
// takes the fast path, not the library's.
func TestDecodeBodyFastPathOptions(t *testing.T) {
	t.Parallel()
	body := unhex(t, "86"+channel+"a161"+message+"01"+position+"a3313a32"+ttl+"05"+ttlMessage+"a178"+read+"a474727565")
	var b rtm.PublishBody
	if err := msgpack.DecodeFast(body, &b); err != nil {
		t.Fatalf("fast path: %v", err)
	}
	want := rtm.PublishBody{Channel: "a", Message: int64(1), Position: "1:2", TTL: ptr(int64(5)), TTLMessage: "x", Read: "true"}
	if !reflect.DeepEqual(b, want) {
		t.Fatalf("fast path %#v, want %#v", b, want)
	}
}

// TestDecodeBodyFastPathFrames decodes the bodies the codec writes: every
// sample PDU's, and every value a message may hold, published and
// delivered.
func TestDecodeBodyFastPathFrames(t *testing.T) {
	t.Parallel()
	for _, b := range sampleBodies(t) {
		for _, bt := range fastBodies {
			sameOutcome(t, b, bt)
		}
	}
}

// FuzzDecodeBodyFastPath decodes arbitrary bodies into each body type with
// a fast path, through DecodeBody and through the library path, and
// requires the same outcome.
func FuzzDecodeBodyFastPath(f *testing.F) {
	for _, tc := range fastCases {
		f.Add(unhex(f, tc.body))
	}
	for _, b := range sampleBodies(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, bt := range fastBodies {
			sameOutcome(t, body, bt)
		}
	})
}

// sampleBodies returns the bodies of the sample PDUs, and of publishes and
// deliveries of messages of every kind.
func sampleBodies(t testing.TB) [][]byte {
	t.Helper()
	var bodies [][]byte
	add := func(p *rtm.PDU) {
		env, err := c.Decode(codectest.Encode(t, c, p))
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, env.Body)
	}
	for _, p := range codectest.SamplePDUs() {
		add(&rtm.PDU{Action: p.Action, Body: p.Body})
	}
	msgs := []any{nil, true, int64(-1), int64(math.MinInt64), uint64(math.MaxUint64), 1.5, "", "ü", []byte{}, []byte{1},
		[]any{}, map[string]any{}, codectest.Message(), codectest.Deep(codec.MaxDepth)}
	for _, m := range msgs {
		add(&rtm.PDU{Action: rtm.ActionPublish, Body: &rtm.PublishBody{Channel: "c", Message: m}})
	}
	add(&rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &rtm.SubscriptionData{SubscriptionID: "s", Position: "1:2", Messages: msgs}})
	return bodies
}

// sameOutcome decodes body into a new body of type bt through DecodeBody
// and through the library path, fails t unless both give the same body
// or an invalid_format with the same reason, and returns DecodeBody's.
func sameOutcome(t testing.TB, body []byte, bt fastBody) (any, error) {
	t.Helper()
	got, want := bt.new(), bt.new()
	err := c.DecodeBody(body, got)
	wantErr := msgpack.DecodeBodyLibrary(body, want)
	if err == nil && wantErr == nil {
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%x into %s: fast path %#v, library %#v", body, bt.name, got, want)
		}
		return got, nil
	}
	e, _ := rtm.AsError(err)
	we, _ := rtm.AsError(wantErr)
	if e == nil || we == nil || e.Code != rtm.CodeInvalidFormat || we.Code != rtm.CodeInvalidFormat {
		t.Fatalf("%x into %s: fast path %v, library %v", body, bt.name, err, wantErr)
	}
	if e.Reason != we.Reason && !normalizationMayGive(body, bt.field, e.Reason, we.Reason) {
		t.Fatalf("%x into %s: fast path %q, library %q", body, bt.name, e.Reason, we.Reason)
	}
	return got, err
}

// normalizationMayGive reports whether normalizing the messages under
// field in body may give each of the reasons. Normalization walks maps in
// Go's random order, so a message whose map holds two faults may be
// refused for either, on either path.
func normalizationMayGive(body []byte, field string, reasons ...string) bool {
	var m map[string]any
	if field == "" || vmsgpack.Unmarshal(body, &m) != nil {
		return false
	}
	msgs := []any{m[field]}
	if field == "messages" {
		msgs, _ = m[field].([]any)
	}
	for _, msg := range msgs {
		if faults := normalizationFaults(msg, 0); len(faults) > 0 {
			for _, r := range reasons {
				if !faults[r] {
					return false
				}
			}
			return true
		}
	}
	return false
}

// normalizationFaults returns the reasons for which codec.Normalize may
// refuse v, as the library decodes it, nested depth deep.
func normalizationFaults(v any, depth int) map[string]bool {
	faults := map[string]bool{}
	switch x := v.(type) {
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			faults[codec.NonFiniteError().Reason] = true
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			faults[codec.NonFiniteError().Reason] = true
		}
	case []any:
		if depth >= codec.MaxDepth {
			faults[codec.TooDeepError().Reason] = true
			break
		}
		for _, e := range x {
			if f := normalizationFaults(e, depth+1); len(f) > 0 {
				return f // items are normalized in order
			}
		}
	case map[string]any:
		if depth >= codec.MaxDepth {
			faults[codec.TooDeepError().Reason] = true
			break
		}
		for k, e := range x {
			if !utf8.ValidString(k) {
				faults[codec.KeyError().Reason] = true
				continue
			}
			for r := range normalizationFaults(e, depth+1) {
				faults[r] = true
			}
		}
	}
	return faults
}

// TestDecodeBodyFastPathDestination decodes into bodies that already hold
// values, which the library decodes into: DecodeBody gives what it gives.
func TestDecodeBodyFastPathDestination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		into any
		want any // nil for invalid_format
	}{
		{"string kept", "81" + message + "01", &rtm.PublishBody{Channel: "c"}, &rtm.PublishBody{Channel: "c", Message: int64(1)}},
		{"string replaced", "81" + position + "a131", &rtm.PositionBody{Position: "0"}, &rtm.PositionBody{Position: "1"}},
		{"message kept and normalized", "81" + channel + "a163", &rtm.PublishBody{Message: int8(1)}, &rtm.PublishBody{Channel: "c", Message: int64(1)}},
		{"message given again", "81" + message + "01", &rtm.PublishBody{Message: "x"}, nil},
		{"messages kept", "81" + subID + "a173", &rtm.SubscriptionData{Messages: []any{}}, &rtm.SubscriptionData{SubscriptionID: "s", Messages: []any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := c.DecodeBody(unhex(t, tt.body), tt.into)
			if tt.want == nil {
				codectest.WantCode(t, err, rtm.CodeInvalidFormat)
				return
			}
			if err != nil || !reflect.DeepEqual(tt.into, tt.want) {
				t.Fatalf("decoded %#v (%v), want %#v", tt.into, err, tt.want)
			}
		})
	}
}

package msgpack_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Satori's options of a publish, in hex.
const (
	ttl        = "a374746c"
	ttlMessage = "ab74746c5f6d657373616765"
	read       = "a472656164"
)

func ptr[T any](v T) *T { return &v }

func pub() any  { return new(rtm.PublishBody) }
func pos() any  { return new(rtm.PositionBody) }
func data() any { return new(rtm.SubscriptionData) }

// refused is the reason a body is refused with.
type refused string

func wrong(path string, kind rtm.ValueKind) refused { return refused(rtm.FieldType(path, kind).Reason) }

func fault(f rtm.Fault) refused { return refused(f) }

func notValid(flaw rtm.Flaw) refused {
	return refused(rtm.NotValid(rtm.PartBody, rtm.FormatMsgpack, flaw).Reason)
}

// decodeCases are bodies, the type each is decoded into, and what
// DecodeBody gives: the body, or a refusal.
var decodeCases = []struct {
	name string
	body string
	into func() any
	want any
}{
	{"empty map", "80", pos, &rtm.PositionBody{}},
	{"string as binary", "81" + position + "c403313a32", pos, &rtm.PositionBody{Position: "1:2"}},
	{"nil string", "81" + channel + "c0", pub, &rtm.PublishBody{}},
	{"binary key", "81c408706f736974696f6e" + "a131", pos, &rtm.PositionBody{Position: "1"}},
	{"nil key", "82c001" + position + "a131", pos, &rtm.PositionBody{Position: "1"}},
	{"binary key not UTF-8", "82c401ff01" + position + "a131", pos, &rtm.PositionBody{Position: "1"}},
	{"unknown keys", "83a178" + "91c3" + position + "a131" + "a179" + "81a17a" + nan, pos, &rtm.PositionBody{Position: "1"}},
	{"unknown key with an integer map key", "82a178" + "810101" + position + "a131", pos, &rtm.PositionBody{Position: "1"}},
	{"unknown key given twice", "83a17801a17802" + position + "a131", pos, &rtm.PositionBody{Position: "1"}},
	{"map16 body", "de0001" + position + "a131", pos, &rtm.PositionBody{Position: "1"}},
	{"no messages", "81" + subID + "a173", data, &rtm.SubscriptionData{SubscriptionID: "s"}},
	{"nil messages", "81" + messages + "c0", data, &rtm.SubscriptionData{}},
	{"empty messages", "81" + messages + "90", data, &rtm.SubscriptionData{Messages: []any{}}},
	{"data naming its channel", "82" + subID + "a173" + "a76368616e6e656c" + "a163", data, &rtm.SubscriptionData{SubscriptionID: "s", Channel: "c"}},
	{"exclude_self", "83" + channel + "a163" + message + "01" + "ac6578636c7564655f73656c66c3", pub,
		&rtm.PublishBody{Channel: "c", Message: int64(1), ExcludeSelf: true}},
	{"nil message", "81" + message + "c0", pub, &rtm.PublishBody{}},
	{"message values", "81" + message + "86a0ca3f000000a162c2a16ec0a175cfffffffffffffffffa178d0ffc40179c0", pub, &rtm.PublishBody{Message: map[string]any{
		"": 0.5, "b": false, "n": nil, "u": uint64(math.MaxUint64), "x": int64(-1), "y": nil,
	}}},
	{"nil map key in a message", "81" + message + "81c001", pub, &rtm.PublishBody{Message: map[string]any{"": int64(1)}}},
	{"map key given twice in a message", "81" + message + "82a161" + nan + "a16101", pub, &rtm.PublishBody{Message: map[string]any{"a": int64(1)}}},
	{"binary message", "81" + message + "c400", pub, &rtm.PublishBody{Message: []byte{}}},
	{"deepest message", "81" + messages + "91" + strings.Repeat("91", codec.MaxDepth) + "a4636f7265", data,
		&rtm.SubscriptionData{Messages: []any{codectest.Deep(codec.MaxDepth)}}},
	// Satori's options.
	{"publish with ttl", "83" + channel + "a161" + message + "01" + ttl + "05", pub, &rtm.PublishBody{Channel: "a", Message: int64(1), TTL: ptr(int64(5))}},
	{"publish with read", "82" + message + "01" + read + "a170", pub, &rtm.PublishBody{Message: int64(1), Read: "p"}},
	{"write with position", "82" + position + "a3313a32" + message + "c0", pub, &rtm.PublishBody{Position: "1:2"}},
	{"ttl_message", "81" + ttlMessage + "81a16101", pub, &rtm.PublishBody{TTLMessage: map[string]any{"a": int64(1)}}},
	{"every option", "86" + channel + "a161" + message + "01" + position + "a3313a32" + ttl + "d0fb" + ttlMessage + "a178" + read + "a474727565", pub,
		&rtm.PublishBody{Channel: "a", Message: int64(1), Position: "1:2", TTL: ptr(int64(-5)), TTLMessage: "x", Read: "true"}},
	{"nil ttl", "81" + ttl + "c0", pub, &rtm.PublishBody{}},
	{"ttl int64", "81" + ttl + "d38000000000000000", pub, &rtm.PublishBody{TTL: ptr(int64(math.MinInt64))}},
	{"ttl as uint64", "81" + ttl + "cf7fffffffffffffff", pub, &rtm.PublishBody{TTL: ptr(int64(math.MaxInt64))}},
	{"nil options", "83" + position + "c0" + ttlMessage + "c0" + read + "c0", pub, &rtm.PublishBody{}},
	{"read as binary", "81" + read + "c40474727565", pub, &rtm.PublishBody{Read: "true"}},
	// Nested structs, lists of them and counts.
	{"history", "82" + channel + "a163" + "a7686973746f7279" + "82a5636f756e7405a3616765cd0e10", func() any { return new(rtm.SubscribeBody) },
		&rtm.SubscribeBody{Channel: "c", History: &rtm.History{Count: ptr(int64(5)), Age: ptr(int64(3600))}}},
	{"nil history", "81a7686973746f7279c0", func() any { return new(rtm.SubscribeBody) }, &rtm.SubscribeBody{}},
	{"members", "81a76d656d6265727392" + "82a7757365725f6964a3616e6ea4696e666f01" + "c0", func() any { return new(rtm.PresenceReply) },
		&rtm.PresenceReply{Members: []rtm.PresenceMember{{UserID: "ann", Info: int64(1)}, {}}}},
	{"largest count", "81" + missed + "cfffffffffffffffff", func() any { return new(rtm.SubscriptionInfo) },
		&rtm.SubscriptionInfo{MissedMessageCount: math.MaxUint64}},
	{"previous message", "81a870726576696f757382" + message + "a178" + position + "a3313a32", func() any { return new(rtm.PreviousReply) },
		&rtm.PreviousReply{Previous: &rtm.Previous{Message: "x", Position: "1:2"}}},
	{"keys", "83" + position + "c0" + message + nan + "a178" + "810101", func() any { return new(rtm.BodyKeys) },
		&rtm.BodyKeys{"position": {}, "message": {}, "x": {}}},
	{"any", "9101", func() any { return new(any) }, ptr[any]([]any{int64(1)})},

	// Refusals: the format first, wherever it fails.
	{"empty", "", pos, notValid(rtm.FlawTruncated)},
	{"truncated", "82" + position + "a131", pos, notValid(rtm.FlawTruncated)},
	{"forged length", "81" + messages + "ddffffffff", data, notValid(rtm.FlawTruncated)},
	{"forged members", "81a76d656d62657273ddffffffff", func() any { return new(rtm.PresenceReply) }, notValid(rtm.FlawTruncated)},
	{"truncated ttl", "81" + ttl + "cd01", pub, notValid(rtm.FlawTruncated)},
	{"extra data", "80c0", pos, notValid(rtm.FlawExtra)},
	{"not a map, then extra data", "01c0", pos, notValid(rtm.FlawExtra)},
	{"reserved byte", "81" + message + "c1", pub, notValid(rtm.FlawReserved)},
	{"extension", "81" + message + "d6ff00000001", pub, notValid(rtm.FlawExtension)},
	{"extension ttl", "81" + ttl + "d40105", pub, notValid(rtm.FlawExtension)},
	{"extension key", "81d40100c0", pos, notValid(rtm.FlawExtension)},
	{"invalid UTF-8", "81" + message + "a1ff", pub, notValid(rtm.FlawUTF8)},
	{"invalid UTF-8 key", "81a1ff01", pos, notValid(rtm.FlawUTF8)},
	{"too deep to scan", "81" + message + strings.Repeat("91", 72) + "c0", pub, notValid(rtm.FlawDeep)},
	{"wrong type before a malformed item", "82" + channel + "01" + message + "c1", pub, notValid(rtm.FlawReserved)},
	{"integer key before a malformed item", "82" + "0101" + message + "c1", pub, notValid(rtm.FlawReserved)},
	// Then the shape of the body.
	{"not a map", "91a131", pos, fault(rtm.BodyNotMap)},
	{"nil body", "c0", pub, fault(rtm.BodyNotMap)},
	{"array into a map", "90", func() any { return new(map[string]any) }, fault(rtm.BodyNotMap)},
	{"array into keys", "90", func() any { return new(rtm.BodyKeys) }, fault(rtm.BodyNotMap)},
	{"integer key", "8101c0", pos, fault(rtm.BodyKeyType)},
	{"array key", "8190c0", pos, fault(rtm.BodyKeyType)},
	{"integer map key in a message", "81" + message + "810101", pub, fault(rtm.MessageKeyType)},
	// Then the kinds of its fields, the first the struct declares.
	{"integer channel", "81" + channel + "05", pub, wrong("channel", rtm.KindNumber)},
	{"map position", "81" + position + "80", pos, wrong("position", rtm.KindMap)},
	{"map messages", "81" + messages + "80", data, wrong("messages", rtm.KindMap)},
	{"string messages", "81" + messages + "a0", data, wrong("messages", rtm.KindString)},
	{"float ttl", "81" + ttl + "cb4014000000000000", pub, wrong("ttl", rtm.KindNumber)},
	{"float32 ttl", "81" + ttl + "ca40a00000", pub, wrong("ttl", rtm.KindNumber)},
	{"string ttl", "81" + ttl + "a135", pub, wrong("ttl", rtm.KindString)},
	{"bool ttl", "81" + ttl + "c3", pub, wrong("ttl", rtm.KindBool)},
	{"array ttl", "81" + ttl + "9101", pub, wrong("ttl", rtm.KindArray)},
	{"binary ttl", "81" + ttl + "c40105", pub, wrong("ttl", rtm.KindBinary)},
	{"ttl out of range", "81" + ttl + "cfffffffffffffffff", pub, wrong("ttl", rtm.KindOutOfRange)},
	{"negative count", "81" + missed + "ff", func() any { return new(rtm.SubscriptionInfo) }, wrong("missed_message_count", rtm.KindOutOfRange)},
	{"integer read", "81" + read + "01", pub, wrong("read", rtm.KindNumber)},
	{"integer exclude_self", "81ac6578636c7564655f73656c6601", pub, wrong("exclude_self", rtm.KindNumber)},
	{"declared first, given last", "82" + ttl + "a0" + channel + "01", pub, wrong("channel", rtm.KindNumber)},
	{"declared first, given first", "82" + channel + "01" + ttl + "a0", pub, wrong("channel", rtm.KindNumber)},
	{"wrong type after a NaN", "82" + message + nan + channel + "01", pub, wrong("channel", rtm.KindNumber)},
	{"wrong type before invalid binary", "82" + position + "c401ff" + channel + "01", pub, wrong("channel", rtm.KindNumber)},
	{"wrong type, then a key twice", "83" + channel + "a163" + channel + "a163" + read + "01", pub, wrong("read", rtm.KindNumber)},
	{"history not a map", "81a7686973746f7279a178", func() any { return new(rtm.SubscribeBody) }, wrong("history", rtm.KindString)},
	{"history count", "81a7686973746f727982a361676501a5636f756e74a178", func() any { return new(rtm.SubscribeBody) }, wrong("history.count", rtm.KindString)},
	{"nested before a later field", "82a5666f726365a178a7686973746f727981a5636f756e74a178", func() any { return new(rtm.SubscribeBody) },
		wrong("history.count", rtm.KindString)},
	{"member not a map", "81a76d656d626572739101", func() any { return new(rtm.PresenceReply) }, wrong("members", rtm.KindNumber)},
	{"member's user", "81a76d656d626572739181a7757365725f696401", func() any { return new(rtm.PresenceReply) }, wrong("members.user_id", rtm.KindNumber)},
	{"nonce", "81a46461746181a56e6f6e636501", func() any { return new(rtm.HandshakeReply) }, wrong("data.nonce", rtm.KindNumber)},
	// Then keys given twice, strings and the messages.
	{"string given twice", "82" + channel + "a161" + channel + "a162", pub, fault(rtm.BodyKeyTwice)},
	{"nil after a string", "82" + channel + "a161" + channel + "c0", pub, fault(rtm.BodyKeyTwice)},
	{"message given twice", "82" + message + "01" + message + "02", pub, fault(rtm.BodyKeyTwice)},
	{"messages given twice", "82" + messages + "9101" + messages + "9102", data, fault(rtm.BodyKeyTwice)},
	{"ttl given twice", "82" + ttl + "05" + ttl + "cd0100", pub, fault(rtm.BodyKeyTwice)},
	{"binary key given twice", "82" + position + "a131" + "c408706f736974696f6e" + "a131", pos, fault(rtm.BodyKeyTwice)},
	{"nested key given twice", "81a7686973746f727982a5636f756e7401a5636f756e7401", func() any { return new(rtm.SubscribeBody) }, fault(rtm.BodyKeyTwice)},
	{"binary string not UTF-8", "81" + position + "c401ff", pos, fault(rtm.BodyNotUTF8)},
	{"read as binary not UTF-8", "81" + read + "c401ff", pub, fault(rtm.BodyNotUTF8)},
	{"binary string not UTF-8 before a NaN", "82" + channel + "c401ff" + message + nan, pub, fault(rtm.BodyNotUTF8)},
	{"NaN", "81" + message + nan, pub, fault(rtm.MessageNonFinite)},
	{"NaN ttl_message", "81" + ttlMessage + nan, pub, fault(rtm.MessageNonFinite)},
	{"float32 infinity", "81" + messages + "92c0ca7f800000", data, fault(rtm.MessageNonFinite)},
	{"binary map key not UTF-8", "81" + message + "81c401ff01", pub, fault(rtm.MessageKeyNotUTF8)},
	{"message too deep", "81" + message + strings.Repeat("91", codec.MaxDepth+1) + "c0", pub, fault(rtm.MessageTooDeep)},
	{"messages too deep", "81" + messages + "92c0" + strings.Repeat("91", codec.MaxDepth+1) + "c0", data, fault(rtm.MessageTooDeep)},
	{"any too deep", strings.Repeat("91", codec.MaxDepth+1) + "c0", func() any { return new(any) }, fault(rtm.MessageTooDeep)},
	{"info too deep", "81a76d656d626572739181a4696e666f" + strings.Repeat("91", codec.MaxDepth+1) + "c0", func() any { return new(rtm.PresenceReply) },
		fault(rtm.MessageTooDeep)},
}

// More keys, in hex.
const missed = "b46d69737365645f6d6573736167655f636f756e74"

// TestDecodeBodyCases decodes each of decodeCases.
func TestDecodeBodyCases(t *testing.T) {
	t.Parallel()
	for _, tc := range decodeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.into()
			err := c.DecodeBody(unhex(t, tc.body), got)
			if want, ok := tc.want.(refused); ok {
				if e, _ := rtm.AsError(err); e == nil || e.Code != rtm.CodeInvalidFormat || e.Reason != string(want) {
					t.Fatalf("error %v, want invalid_format %q", err, want)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("decoded %#v (%v), want %#v", got, err, tc.want)
			}
		})
	}
}

// TestDecodeBodyKnowsEveryField gives each field of each body type, by its
// json tag, a value of a kind no field but a message takes (a float): the
// decoder refuses it,
// naming the field, so that its table has every field, under the name
// the other codecs use.
func TestDecodeBodyKnowsEveryField(t *testing.T) {
	t.Parallel()
	for _, bt := range codectest.BodyTypes {
		typ := reflect.TypeOf(bt.New()).Elem()
		if typ.Kind() != reflect.Struct {
			continue
		}
		for i := range typ.NumField() {
			key, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if typ.Field(i).Type.Kind() == reflect.Interface {
				continue // a message, which takes any kind
			}
			body := codectest.Value(t, c, map[string]any{key: 1.5})
			err := c.DecodeBody(body, bt.New())
			if e, _ := rtm.AsError(err); e == nil || e.Reason != rtm.FieldType(key, rtm.KindNumber).Reason {
				t.Errorf("%s.%s: %v, want the field refused", bt.Name, key, err)
			}
		}
	}
}

// TestDecodeBodyDestination decodes into bodies that already hold values:
// what the body gives replaces them, the rest stays.
func TestDecodeBodyDestination(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		into any
		want any
	}{
		{"string kept", "81" + message + "01", &rtm.PublishBody{Channel: "c"}, &rtm.PublishBody{Channel: "c", Message: int64(1)}},
		{"string kept on nil", "81" + channel + "c0", &rtm.PublishBody{Channel: "c"}, &rtm.PublishBody{Channel: "c"}},
		{"string replaced", "81" + position + "a131", &rtm.PositionBody{Position: "0"}, &rtm.PositionBody{Position: "1"}},
		{"message replaced", "81" + message + "01", &rtm.PublishBody{Message: "x"}, &rtm.PublishBody{Message: int64(1)}},
		{"message set to nil", "81" + message + "c0", &rtm.PublishBody{Message: "x"}, &rtm.PublishBody{}},
		{"messages kept", "81" + subID + "a173", &rtm.SubscriptionData{Messages: []any{}}, &rtm.SubscriptionData{SubscriptionID: "s", Messages: []any{}}},
		{"history filled", "81a7686973746f727981a361676501", &rtm.SubscribeBody{History: &rtm.History{Count: ptr(int64(2))}},
			&rtm.SubscribeBody{History: &rtm.History{Count: ptr(int64(2)), Age: ptr(int64(1))}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := c.DecodeBody(unhex(t, tt.body), tt.into)
			if err != nil || !reflect.DeepEqual(tt.into, tt.want) {
				t.Fatalf("decoded %#v (%v), want %#v", tt.into, err, tt.want)
			}
		})
	}
}

// TestDecodeBodyOtherTypes checks that a destination that is not a body
// type of package rtm is an error, not a guess.
func TestDecodeBodyOtherTypes(t *testing.T) {
	t.Parallel()
	for _, v := range []any{new(struct{ A string }), new(string), map[string]any{}} {
		if err := c.DecodeBody([]byte{0x80}, v); err == nil {
			t.Errorf("decoded into %T", v)
		} else if _, ok := rtm.AsError(err); ok {
			t.Errorf("%T: %v is a protocol error, not the caller's", v, err)
		}
	}
}

// TestDecodeBodyAllocations counts the allocations of the bodies decoded
// most: what the body holds (its strings and message), nothing more.
func TestDecodeBodyAllocations(t *testing.T) { // not parallel: it counts allocations
	tests := []struct {
		name string
		body *rtm.PDU
		into func() any
		want float64
	}{
		{"publish", &rtm.PDU{Action: rtm.ActionPublish, Body: &rtm.PublishBody{Channel: "c", Message: "m"}}, pub, 3},
		{"acknowledgment", &rtm.PDU{Action: "rtm/publish/ok", Body: &rtm.PositionBody{Position: "1:2"}}, pos, 1},
		{"subscribe", &rtm.PDU{Action: rtm.ActionSubscribe, Body: &rtm.SubscribeBody{Channel: "c", History: &rtm.History{Count: ptr(int64(1))}}},
			func() any { return new(rtm.SubscribeBody) }, 3},
	}
	for _, tt := range tests {
		env, err := c.Decode(codectest.Encode(t, c, tt.body))
		if err != nil {
			t.Fatal(err)
		}
		v := tt.into()
		n := testing.AllocsPerRun(100, func() {
			reflect.ValueOf(v).Elem().SetZero()
			if err := c.DecodeBody(env.Body, v); err != nil {
				t.Fatal(err)
			}
		})
		if n > tt.want {
			t.Errorf("%s: %v allocations, want at most %v", tt.name, n, tt.want)
		}
	}
}

// FuzzDecodeBody decodes arbitrary bodies into every body type: it never
// panics, refuses with invalid_format and a reason of package rtm only,
// and a body it accepts, the msgpack library (as a Go client would use
// it) decodes to the same value when it accepts it too.
func FuzzDecodeBody(f *testing.F) {
	for _, tc := range decodeCases {
		f.Add(unhex(f, tc.body))
	}
	for _, b := range sampleBodies(f) {
		f.Add(b)
	}
	types := append(codectest.BodyTypes[:len(codectest.BodyTypes):len(codectest.BodyTypes)],
		codectest.BodyType{Name: "any", New: func() any { return new(any) }},
		codectest.BodyType{Name: "keys", New: func() any { return new(rtm.BodyKeys) }})
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, bt := range types {
			got := bt.New()
			err := c.DecodeBody(body, got)
			if err != nil {
				e, ok := rtm.AsError(err)
				if !ok || e.Code != rtm.CodeInvalidFormat || !rtm.IsFormatReason(e.Reason) {
					t.Fatalf("%x into %s: %v, want invalid_format with a reason of package rtm", body, bt.Name, err)
				}
				continue
			}
			want := bt.New()
			if libraryDecode(body, want) == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%x into %s: %#v, the library %#v", body, bt.Name, got, want)
			}
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

package msgpack_test

import (
	"encoding/hex"
	"math"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	shared "github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
	lean "github.com/sluicehq/sluice/wasm/internal/msgpack"
)

// Pieces of hand-written frames, in hex.
const (
	actionA = "a6616374696f6e" + "a161" // "action": "a"
	id      = "a26964"                  // "id"
	body    = "a4626f6479"              // "body"
	msgKey  = "a76d657373616765"        // "message"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wantInvalid checks that an error is an invalid_format *rtm.Error.
func wantInvalid(t *testing.T, err error) {
	t.Helper()
	e, ok := rtm.AsError(err)
	if !ok || e.Code != rtm.CodeInvalidFormat {
		t.Fatalf("error = %v, want invalid_format", err)
	}
}

func TestDecodeRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		frame string
	}{
		{name: "empty", frame: ""},
		{name: "not a map", frame: "93010203"},
		{name: "no action", frame: "81" + body + "80"},
		{name: "action twice", frame: "82" + actionA + actionA},
		{name: "action not a string", frame: "81a6616374696f6e01"},
		{name: "id a float", frame: "82" + actionA + id + "cb3ff8000000000000"},
		{name: "id too large", frame: "82" + actionA + id + "cfffffffffffffffff"},
		{name: "body not a map", frame: "82" + actionA + body + "90"},
		{name: "key not a string", frame: "8201" + "01"},
		{name: "truncated", frame: "82" + actionA + body + "81" + msgKey},
		{name: "extra data", frame: "81" + actionA + "c0"},
		{name: "reserved byte", frame: "82" + actionA + body + "81" + msgKey + "c1"},
		{name: "extension", frame: "82" + actionA + body + "81" + msgKey + "d6ff00000001"},
		{name: "invalid UTF-8", frame: "82" + actionA + body + "81" + msgKey + "a2c328"},
		{name: "forged length", frame: "82" + actionA + body + "81" + msgKey + "ddffffffff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			frame := unhex(t, tt.frame)
			_, err := lean.Codec{}.Decode(frame)
			wantInvalid(t, err)
			if _, err := (shared.Codec{}).Decode(frame); err == nil {
				t.Fatal("the shared codec accepts the frame")
			}
		})
	}
}

func TestDecodeBodyRefuses(t *testing.T) {
	t.Parallel()
	nested := ""
	for range codec.MaxDepth + 10 {
		nested += "91"
	}
	tests := []struct {
		name string
		body string
		into any
	}{
		{name: "not a map", body: "90", into: new(rtm.PositionBody)},
		{name: "wrong field type", body: "81a8706f736974696f6e01", into: new(rtm.PositionBody)},
		{name: "negative count", body: "85a4696e666fa0a6726561736f6ea0a8706f736974696f6ea0af737562736372697074696f6e5f6964a0b46d69737365645f6d6573736167655f636f756e74ff", into: new(rtm.SubscriptionInfo)},
		{name: "NaN", body: "81" + msgKey + "cb7ff8000000000001", into: new(rtm.ReadReply)},
		{name: "binary map key not UTF-8", body: "81" + msgKey + "81c401ff01", into: new(rtm.ReadReply)},
		{name: "too deep", body: "81" + msgKey + nested + "c0", into: new(rtm.ReadReply)},
		{name: "nonce not a string", body: "81a46461746181a56e6f6e636501", into: new(rtm.HandshakeReply)},
		{name: "messages not a list", body: "81a86d6573736167657301", into: new(rtm.SubscriptionData)},
		{name: "extra data", body: "80c0", into: new(map[string]any)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wantInvalid(t, lean.Codec{}.DecodeBody(unhex(t, tt.body), tt.into))
		})
	}
}

// TestDecodeBodyKeys checks that map keys given as binary or nil, which
// the shared codec's library reads as strings, are read alike.
func TestDecodeBodyKeys(t *testing.T) {
	t.Parallel()
	body := unhex(t, "82"+"c408706f736974696f6e"+"a131"+msgKey+"82c4016101c002") // {bin"position": "1", "message": {bin"a": 1, nil: 2}}
	var got, want rtm.ReadReply
	if err := (lean.Codec{}).DecodeBody(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := (shared.Codec{}).DecodeBody(body, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || got.Position != "1" {
		t.Fatalf("decoded %#v, the shared codec %#v", got, want)
	}
}

func TestAppendValueRefuses(t *testing.T) {
	t.Parallel()
	var deep any = "core"
	for range codec.MaxDepth + 1 {
		deep = []any{deep}
	}
	tests := []struct {
		name string
		v    any
	}{
		{name: "NaN", v: math.NaN()},
		{name: "infinity", v: math.Inf(-1)},
		{name: "invalid UTF-8", v: "\xc3\x28"},
		{name: "invalid key", v: map[string]any{"\xff": 1}},
		{name: "too deep", v: deep},
		{name: "unsupported", v: struct{}{}},
		{name: "non-string key", v: map[any]any{1: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dst := []byte{1, 2}
			out, err := lean.Codec{}.AppendValue(dst, tt.v)
			wantInvalid(t, err)
			if len(out) != 2 {
				t.Fatalf("dst grew to % x on error", out)
			}
		})
	}
}

func TestAppendPDURefuses(t *testing.T) {
	t.Parallel()
	p := &rtm.PDU{Action: rtm.ActionPublish, Body: &rtm.PublishBody{Channel: "c", Message: math.NaN()}}
	dst := []byte{7}
	out, err := lean.Codec{}.AppendPDU(dst, p)
	if err == nil || len(out) != 1 {
		t.Fatalf("AppendPDU(NaN) = % x, %v; want an error and dst unchanged", out, err)
	}
	if _, err := (lean.Codec{}).AppendPDU(nil, &rtm.PDU{Action: "\xff"}); err == nil {
		t.Fatal("an action that is not UTF-8 was encoded")
	}
}

// TestValues checks every kind of value, and other Go widths, against the
// shared codec's encoding and back.
func TestValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want any // what a receiver decodes; nil means v
	}{
		{name: "message", v: message()},
		{name: "int32", v: int32(-5), want: int64(-5)},
		{name: "uint8", v: uint8(200), want: int64(200)},
		{name: "float32", v: float32(1.5), want: 1.5},
		{name: "max uint64", v: uint64(math.MaxUint64)},
		{name: "raw", v: rtm.RawValue{0x01}, want: int64(1)},
		{name: "map any", v: map[any]any{"k": "v"}, want: map[string]any{"k": "v"}},
		{name: "empty binary", v: []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := tt.want
			if want == nil {
				want = tt.v
			}
			a, err := lean.Codec{}.AppendValue(nil, tt.v)
			if err != nil {
				t.Fatal(err)
			}
			b, err := shared.Codec{}.AppendValue(nil, tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(a) != string(b) {
				t.Fatalf("lean % x, shared % x", a, b)
			}
			var got any
			if err := (lean.Codec{}).DecodeBody(wrapValue(a), &got); err != nil {
				t.Fatal(err)
			}
			if v := got.(map[string]any)["v"]; !reflect.DeepEqual(v, want) {
				t.Fatalf("decoded %#v, want %#v", v, want)
			}
		})
	}
}

// wrapValue makes {"v": value} out of an encoded value.
func wrapValue(enc []byte) []byte {
	return append([]byte{0x81, 0xa1, 'v'}, enc...)
}

func TestAppendData(t *testing.T) {
	t.Parallel()
	msgs := [][]byte{{0x01}, {0xa1, 'x'}}
	pos := rtm.Position{Epoch: 3, Offset: 9}
	a := lean.Codec{}.AppendData(nil, "s", pos, msgs)
	env, err := shared.Codec{}.Decode(a)
	if err != nil {
		t.Fatal(err)
	}
	var d rtm.SubscriptionData
	if err := (shared.Codec{}).DecodeBody(env.Body, &d); err != nil {
		t.Fatal(err)
	}
	want := rtm.SubscriptionData{SubscriptionID: "s", Position: "3:9", Messages: []any{int64(1), "x"}}
	if env.Action != rtm.ActionSubscriptionData || !reflect.DeepEqual(d, want) {
		t.Fatalf("got %q %+v", env.Action, d)
	}
}

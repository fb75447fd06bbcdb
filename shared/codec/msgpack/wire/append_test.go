package wire_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestAppend checks each primitive at the edges of its forms.
func TestAppend(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{name: "nil", got: wire.AppendNil(nil), want: "c0"},
		{name: "true", got: wire.AppendBool(nil, true), want: "c3"},
		{name: "false", got: wire.AppendBool(nil, false), want: "c2"},
		{name: "fixint", got: wire.AppendInt(nil, 127), want: "7f"},
		{name: "uint8", got: wire.AppendInt(nil, 128), want: "cc80"},
		{name: "uint16", got: wire.AppendUint(nil, 256), want: "cd0100"},
		{name: "uint32", got: wire.AppendUint(nil, 70000), want: "ce00011170"},
		{name: "uint64", got: wire.AppendUint(nil, math.MaxUint64), want: "cfffffffffffffffff"},
		{name: "negative fixint", got: wire.AppendInt(nil, -32), want: "e0"},
		{name: "int8", got: wire.AppendInt(nil, -33), want: "d0df"},
		{name: "int16", got: wire.AppendInt(nil, -129), want: "d1ff7f"},
		{name: "int32", got: wire.AppendInt(nil, -40000), want: "d2ffff63c0"},
		{name: "int64", got: wire.AppendInt(nil, math.MinInt64), want: "d38000000000000000"},
		{name: "float", got: wire.AppendFloat(nil, 1.5), want: "cb3ff8000000000000"},
		{name: "fixstr", got: wire.AppendString(nil, "ü"), want: "a2c3bc"},
		{name: "str8", got: wire.AppendString(nil, strings.Repeat("a", 32)), want: "d920" + strings.Repeat("61", 32)},
		{name: "str16", got: wire.AppendString(nil, strings.Repeat("a", 256))[:3], want: "da0100"},
		{name: "str32", got: wire.AppendString(nil, strings.Repeat("a", 65536))[:5], want: "db00010000"},
		{name: "bin8", got: wire.AppendBinary(nil, []byte{1, 2}), want: "c4020102"},
		{name: "bin16", got: wire.AppendBinary(nil, make([]byte, 256))[:3], want: "c50100"},
		{name: "bin32", got: wire.AppendBinary(nil, make([]byte, 65536))[:5], want: "c600010000"},
		{name: "fixarray", got: wire.AppendArrayHead(nil, 15), want: "9f"},
		{name: "array16", got: wire.AppendArrayHead(nil, 16), want: "dc0010"},
		{name: "array32", got: wire.AppendArrayHead(nil, 65536), want: "dd00010000"},
		{name: "fixmap", got: wire.AppendMapHead(nil, 15), want: "8f"},
		{name: "map16", got: wire.AppendMapHead(nil, 16), want: "de0010"},
		{name: "map32", got: wire.AppendMapHead(nil, 65536), want: "df00010000"},
		{name: "appends", got: wire.AppendNil([]byte{1}), want: "01c0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := hex.EncodeToString(tt.got); got != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAppendValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{name: "scalars", v: []any{nil, true, int64(-1), uint64(math.MaxUint64), 1.5}, want: "95c0c3ffcfffffffffffffffffcb3ff8000000000000"},
		{name: "other widths", v: []any{int8(-5), uint16(300), float32(0.5)}, want: "93fbcd012ccb3fe0000000000000"},
		{name: "sorted map", v: map[string]any{"b": int64(1), "a": "x"}, want: "82a161a178a16201"},
		{name: "map of any", v: map[any]any{"k": []byte{7}}, want: "81a16bc40107"},
		{name: "raw", v: rtm.RawValue{0xa1, 'x'}, want: "a178"},
		{name: "empty raw", v: rtm.RawValue{}, want: "c0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := wire.AppendValue([]byte{9}, tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if h := hex.EncodeToString(got); h != "09"+tt.want {
				t.Fatalf("got %s, want 09%s", h, tt.want)
			}
		})
	}
}

// TestAppendValueReasons checks the reason a client is given for each
// value the canonical model has no room for, and that dst is kept.
func TestAppendValueReasons(t *testing.T) {
	t.Parallel()
	var tooDeep any = "core"
	for range codec.MaxDepth + 1 {
		tooDeep = []any{tooDeep}
	}
	tests := []struct {
		name   string
		v      any
		reason string
	}{
		{name: "NaN in a list", v: []any{int64(1), math.NaN()}, reason: string(rtm.MessageNonFinite)},
		{name: "infinity", v: math.Inf(1), reason: string(rtm.MessageNonFinite)},
		{name: "string", v: "\xc3\x28", reason: string(rtm.MessageNotUTF8)},
		{name: "key", v: map[string]any{"ok": 1, "\xff": 1}, reason: string(rtm.MessageKeyNotUTF8)},
		{name: "nesting", v: map[string]any{"a": tooDeep}, reason: string(rtm.MessageTooDeep)},
		{name: "integer key", v: map[any]any{1: 2}, reason: string(rtm.MessageKeyType)},
		{name: "struct", v: struct{}{}, reason: string(rtm.MessageUnsupported)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := wire.AppendValue([]byte{1, 2}, tt.v)
			e, ok := rtm.AsError(err)
			if !ok || e.Code != rtm.CodeInvalidFormat || e.Reason != tt.reason {
				t.Fatalf("error %v, want invalid_format: %s", err, tt.reason)
			}
			if string(out) != "\x01\x02" {
				t.Fatalf("dst became % x", out)
			}
		})
	}
}

func TestAppendPDUStart(t *testing.T) {
	t.Parallel()
	const action = "a6616374696f6e" + "a161" // "action": "a"
	tests := []struct {
		name string
		id   rtm.ID
		want string
	}{
		{name: "no id", want: "82" + action},
		{name: "int id", id: rtm.IntID(-40000), want: "83" + action + "a26964d2ffff63c0"},
		{name: "string id", id: rtm.StringID("x"), want: "83" + action + "a26964a178"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := hex.EncodeToString(wire.AppendPDUStart(nil, "a", tt.id))
			if want := tt.want + "a4626f6479"; got != want {
				t.Fatalf("got %s, want %s", got, want)
			}
		})
	}
}

func TestAppendData(t *testing.T) {
	t.Parallel()
	msgs := [][]byte{{0x01}, {0xa1, 'x'}}
	tests := []struct {
		name string
		pos  rtm.Position
	}{
		{name: "short", pos: rtm.Position{Epoch: 3, Offset: 9}},
		{name: "longest", pos: rtm.Position{Epoch: math.MaxUint64, Offset: math.MaxUint64}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := wire.AppendData(nil, "s", tt.pos, msgs)
			// In the order the edge has always written: not sorted.
			want := wire.AppendMapHead(nil, 2)
			want = wire.AppendString(wire.AppendString(want, "action"), rtm.ActionSubscriptionData)
			want = wire.AppendMapHead(wire.AppendString(want, "body"), 3)
			want = wire.AppendString(wire.AppendString(want, "subscription_id"), "s")
			want = wire.AppendString(wire.AppendString(want, "position"), tt.pos.String())
			want = wire.AppendArrayHead(wire.AppendString(want, "messages"), 2)
			want = append(want, 0x01, 0xa1, 'x')
			if string(got) != string(want) {
				t.Fatalf("got % x\nwant % x", got, want)
			}
		})
	}
}

func TestAppendDataAllocs(t *testing.T) {
	buf := make([]byte, 0, 256)
	msgs := [][]byte{{0x01}, {0xa1, 'x'}}
	pos := rtm.Position{Epoch: math.MaxUint64, Offset: 7}
	if n := testing.AllocsPerRun(100, func() { buf = wire.AppendData(buf[:0], "sub", pos, msgs) }); n != 0 {
		t.Fatalf("AppendData allocates %v times per call, want 0", n)
	}
}

// TestErrors checks that every error of the format says its flaw, worded
// by package rtm, and reads "msgpack: <flaw>".
func TestErrors(t *testing.T) {
	t.Parallel()
	for _, err := range []error{wire.ErrTruncated, wire.ErrReserved, wire.ErrExt, wire.ErrDeep, wire.ErrUTF8, wire.ErrExtra} {
		flaw := wire.FlawOf(fmt.Errorf("wrapped: %w", err))
		if flaw == rtm.FlawUnknown || err.Error() != "msgpack: "+string(flaw) {
			t.Errorf("%q has flaw %q", err, flaw)
		}
		if r := rtm.NotValid(rtm.PartBody, rtm.FormatMsgpack, flaw).Reason; !rtm.IsFormatReason(r) {
			t.Errorf("%q: reason %q is not one of package rtm's", err, r)
		}
	}
	if flaw := wire.FlawOf(wire.ErrKey); flaw != rtm.FlawUnknown {
		t.Errorf("ErrKey has flaw %q, want none: it is not the format's fault", flaw)
	}
}

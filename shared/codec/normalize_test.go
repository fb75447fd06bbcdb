package codec_test

import (
	stdjson "encoding/json"
	"math"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   any
		want any
	}{
		{"nil", nil, nil},
		{"bool", true, true},
		{"int", 5, int64(5)},
		{"int8", int8(-8), int64(-8)},
		{"int16", int16(-16), int64(-16)},
		{"int32", int32(math.MinInt32), int64(math.MinInt32)},
		{"int64", int64(math.MinInt64), int64(math.MinInt64)},
		{"uint", uint(7), int64(7)},
		{"uint8", uint8(255), int64(255)},
		{"uint16", uint16(65535), int64(65535)},
		{"uint32", uint32(math.MaxUint32), int64(math.MaxUint32)},
		{"small uint64", uint64(math.MaxInt64), int64(math.MaxInt64)},
		{"large uint64", uint64(math.MaxInt64) + 1, uint64(math.MaxInt64) + 1},
		{"large uint", uint(math.MaxUint64), uint64(math.MaxUint64)},
		{"uintptr", uintptr(3), int64(3)},
		{"float32", float32(0.1), float64(float32(0.1))},
		{"float64", 0.1, 0.1},
		{"string", "ü", "ü"},
		{"bytes", []byte{1}, []byte{1}},
		{"number int", stdjson.Number("-12"), int64(-12)},
		{"number max uint64", stdjson.Number("18446744073709551615"), uint64(math.MaxUint64)},
		{"number past uint64", stdjson.Number("18446744073709551616"), 18446744073709551616.0},
		{"number below int64", stdjson.Number("-9223372036854775809"), -9223372036854775809.0},
		{"number fraction", stdjson.Number("1.0"), 1.0},
		{"number exponent", stdjson.Number("2E3"), 2000.0},
		{"number underflow", stdjson.Number("1e-400"), 0.0},
		{"nested", []any{map[any]any{"a": []any{int8(1), map[string]any{"b": uint16(2)}}}},
			[]any{map[string]any{"a": []any{int64(1), map[string]any{"b": int64(2)}}}}},
		{"deepest", codectest.Deep(codec.MaxDepth), codectest.Deep(codec.MaxDepth)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := codec.Normalize(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("Normalize(%#v) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestNormalizeRefuses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		in    any
		fault rtm.Fault
	}{
		{"integer key", map[any]any{1: "x"}, rtm.MessageKeyType},
		{"nested bool key", []any{map[any]any{"a": map[any]any{true: 1}}}, rtm.MessageKeyType},
		{"too deep", codectest.Deep(codec.MaxDepth + 1), rtm.MessageTooDeep},
		{"too deep map", deepMap(codec.MaxDepth + 1), rtm.MessageTooDeep},
		{"NaN", math.NaN(), rtm.MessageNonFinite},
		{"infinity in map", map[string]any{"x": math.Inf(1)}, rtm.MessageNonFinite},
		{"float32 infinity", float32(math.Inf(-1)), rtm.MessageNonFinite},
		{"number overflow", stdjson.Number("1e400"), rtm.MessageNumber},
		{"invalid UTF-8", "\xff", rtm.MessageNotUTF8},
		{"invalid UTF-8 key", map[string]any{"\xfe": 1}, rtm.MessageKeyNotUTF8},
		{"struct", struct{}{}, rtm.MessageUnsupported},
		{"typed slice", []int{1}, rtm.MessageUnsupported},
		{"typed map", map[string]string{}, rtm.MessageUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := codec.Normalize(tc.in)
			if e, _ := rtm.AsError(err); e == nil || *e != *rtm.Invalid(tc.fault) {
				t.Fatalf("error %v, want invalid_format %q", err, tc.fault)
			}
		})
	}
}

func deepMap(n int) any {
	var v any = "core"
	for range n {
		v = map[string]any{"k": v}
	}
	return v
}

func TestNormalizeInPlace(t *testing.T) {
	t.Parallel()
	s := []any{int32(1)}
	m := map[string]any{"a": uint8(2)}
	if _, err := codec.Normalize(s); err != nil || s[0] != int64(1) {
		t.Fatalf("slice after Normalize: %#v, %v", s, err)
	}
	if _, err := codec.Normalize(m); err != nil || m["a"] != int64(2) {
		t.Fatalf("map after Normalize: %#v, %v", m, err)
	}
}

func TestNormalizeBody(t *testing.T) {
	t.Parallel()
	data := &rtm.SubscriptionData{Messages: []any{int8(1), map[any]any{"k": uint(2)}}}
	if err := codec.NormalizeBody(data); err != nil {
		t.Fatal(err)
	}
	if want := []any{int64(1), map[string]any{"k": int64(2)}}; !reflect.DeepEqual(data.Messages, want) {
		t.Fatalf("messages %#v, want %#v", data.Messages, want)
	}
	var a any = int16(3)
	m := map[string]any{"x": []any{uint32(4)}}
	s := []any{float32(0.5)}
	for _, v := range []any{&a, &m, &s, &rtm.ChannelBody{Channel: "c"}, new(map[string]any), new([]any)} {
		if err := codec.NormalizeBody(v); err != nil {
			t.Fatalf("NormalizeBody(%T): %v", v, err)
		}
	}
	if a != int64(3) || m["x"].([]any)[0] != int64(4) || s[0] != 0.5 {
		t.Fatalf("not normalized: %#v %#v %#v", a, m, s)
	}
	bad := &rtm.PublishBody{Message: []any{math.NaN()}}
	codectest.WantCode(t, codec.NormalizeBody(bad), rtm.CodeInvalidFormat)
	bad2 := &map[string]any{"k": map[any]any{1: 2}}
	codectest.WantCode(t, codec.NormalizeBody(bad2), rtm.CodeInvalidFormat)
}

func TestAction(t *testing.T) { // not parallel: it counts allocations
	for _, a := range []string{rtm.ActionPublish, "rtm/publish/ok", "auth/handshake/error", rtm.ActionSubscriptionData, rtm.ActionError, "custom/thing"} {
		if got := codec.Action([]byte(a)); got != a {
			t.Fatalf("Action(%q) = %q", a, got)
		}
	}
	// Every action of package rtm, and each request's replies, is known:
	// it comes back without allocating.
	var all []string
	for _, a := range []string{rtm.ActionPublish, rtm.ActionWrite, rtm.ActionDelete, rtm.ActionRead,
		rtm.ActionSubscribe, rtm.ActionUnsubscribe, rtm.ActionHandshake, rtm.ActionAuthenticate, rtm.ActionPresence} {
		all = append(all, a, rtm.Reply(a, rtm.OutcomeOK), rtm.Reply(a, rtm.OutcomeError))
	}
	all = append(all, rtm.ActionSubscriptionData, rtm.ActionSubscriptionInfo, rtm.ActionSubscriptionErr,
		rtm.ActionSubscriptionPresence, rtm.ActionError)
	for _, a := range all {
		b := []byte(a)
		if got := codec.Action(b); got != a {
			t.Fatalf("Action(%q) = %q", a, got)
		}
		if n := testing.AllocsPerRun(100, func() { _ = codec.Action(b) }); n != 0 {
			t.Fatalf("Action allocates %v times for %q, a known action, want 0", n, a)
		}
	}
	// An unknown action is a copy, not an alias of the frame.
	u := []byte("x/y")
	got := codec.Action(u)
	u[0] = 'z'
	if got != "x/y" {
		t.Fatalf("Action aliased its input: %q", got)
	}
}

func TestSortedKeys(t *testing.T) {
	t.Parallel()
	got := codec.SortedKeys(nil, map[string]any{"b": 1, "a": 2, "": 3, "B": 4})
	if want := []string{"", "B", "a", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("SortedKeys = %q, want %q", got, want)
	}
}

func TestStringMap(t *testing.T) {
	t.Parallel()
	got, err := codec.StringMap(map[any]any{"a": int8(1)})
	if err != nil || !reflect.DeepEqual(got, map[string]any{"a": int8(1)}) {
		t.Fatalf("StringMap = %#v, %v", got, err)
	}
	_, err = codec.StringMap(map[any]any{1.5: "x"})
	codectest.WantCode(t, err, rtm.CodeInvalidFormat)
}

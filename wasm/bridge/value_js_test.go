//go:build js && wasm

package bridge

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"syscall/js"
	"testing"

	"go.uber.org/goleak"
)

// The tests run in a real JavaScript engine: `GOOS=js GOARCH=wasm go test
// -exec "$(go env GOROOT)/lib/wasm/go_js_wasm_exec" ./wasm/bridge/` runs
// them under Node.js (make test does).

// runtime.handleEvent is the js/wasm runtime's own goroutine, which runs
// a callback from JavaScript (a timer's, when goleak waits); it is not the
// package's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("runtime.handleEvent"))
}

// jsEval evaluates a JavaScript expression in the global scope.
func jsEval(t *testing.T, src string) js.Value {
	t.Helper()
	return js.Global().Call("eval", "("+src+")")
}

// describe shows a JavaScript value unambiguously: its kind as well as its
// content, and an object's keys in their order.
var describe = js.Global().Call("eval", `(function describe(v) {
	if (v === null) return "null";
	if (v === undefined) return "undefined";
	if (typeof v === "bigint") return v + "n";
	if (typeof v === "number") return Object.is(v, -0) ? "-0" : String(v);
	if (typeof v !== "object") return typeof v + ":" + JSON.stringify(v);
	if (v instanceof Uint8Array) return "u8[" + Array.from(v).join(",") + "]";
	if (Array.isArray(v)) return "[" + v.map(describe).join(",") + "]";
	if (Object.getPrototypeOf(v) !== Object.prototype) return "not a plain object";
	return "{" + Object.keys(v).map(k => JSON.stringify(k) + ":" + describe(v[k])).join(",") + "}";
})`)

func TestFromJS(t *testing.T) {
	tests := []struct {
		name string
		src  string // a JavaScript expression
		want any
	}{
		{name: "null", src: "null", want: nil},
		{name: "undefined", src: "undefined", want: nil},
		{name: "true", src: "true", want: true},
		{name: "false", src: "false", want: false},
		{name: "zero", src: "0", want: int64(0)},
		{name: "negative zero", src: "-0", want: int64(0)},
		{name: "integer", src: "42", want: int64(42)},
		{name: "negative integer", src: "-7", want: int64(-7)},
		{name: "integral float", src: "2.0", want: int64(2)},
		{name: "max safe integer", src: "Number.MAX_SAFE_INTEGER", want: int64(1<<53 - 1)},
		{name: "min safe integer", src: "Number.MIN_SAFE_INTEGER", want: int64(-(1<<53 - 1))},
		{name: "2^53 is a float", src: "2**53", want: float64(1 << 53)},
		{name: "fraction", src: "1.5", want: 1.5},
		{name: "negative fraction", src: "-0.1", want: -0.1},
		{name: "huge", src: "1e300", want: 1e300},
		{name: "tiny", src: "5e-324", want: 5e-324},
		{name: "empty string", src: `""`, want: ""},
		{name: "string", src: `"héllo 🌍"`, want: "héllo 🌍"},
		{name: "empty array", src: "[]", want: []any{}},
		{name: "array", src: `[1, "a", null, true, 1.5]`, want: []any{int64(1), "a", nil, true, 1.5}},
		{name: "array hole and undefined are null", src: "[undefined, , 1]", want: []any{nil, nil, int64(1)}},
		{name: "empty object", src: "({})", want: map[string]any{}},
		{name: "nested", src: `({a: 1, b: {c: [true, {d: "e"}]}})`,
			want: map[string]any{"a": int64(1), "b": map[string]any{"c": []any{true, map[string]any{"d": "e"}}}}},
		{name: "undefined, function and symbol members are left out", src: `({a: undefined, f() {}, s: Symbol("x"), k: 1})`,
			want: map[string]any{"k": int64(1)}},
		{name: "null member stays", src: "({a: null})", want: map[string]any{"a": nil}},
		{name: "Uint8Array", src: "new Uint8Array([1, 2, 255])", want: []byte{1, 2, 255}},
		{name: "empty Uint8Array", src: "new Uint8Array(0)", want: []byte{}},
		{name: "Uint8Array view", src: "new Uint8Array([1, 2, 3, 4]).subarray(1, 3)", want: []byte{2, 3}},
		{name: "ArrayBuffer", src: "new Uint8Array([9, 8]).buffer", want: []byte{9, 8}},
		{name: "other typed array as its bytes", src: "new Uint16Array([0x0102])", want: []byte{2, 1}},
		{name: "DataView", src: "new DataView(new Uint8Array([1, 2, 3]).buffer, 1)", want: []byte{2, 3}},
		{name: "binary inside an object", src: "({b: new Uint8Array([7])})", want: map[string]any{"b": []byte{7}}},
		{name: "Date as its ISO string", src: "new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6))", want: "2024-01-02T03:04:05.006Z"},
		{name: "Date inside an array", src: "[new Date(0)]", want: []any{"1970-01-01T00:00:00.000Z"}},
		{name: "toJSON returning an object", src: `({toJSON() { return {x: [1]} }})`, want: map[string]any{"x": []any{int64(1)}}},
		{name: "small BigInt", src: "5n", want: int64(5)},
		{name: "negative BigInt", src: "-5n", want: int64(-5)},
		{name: "BigInt past 2^53", src: "2n**53n + 1n", want: int64(1<<53 + 1)},
		{name: "min int64 BigInt", src: "-(2n**63n)", want: int64(math.MinInt64)},
		{name: "BigInt past int64", src: "2n**64n - 1n", want: uint64(math.MaxUint64)},
		{name: "BigInt member", src: "({n: 2n**63n})", want: map[string]any{"n": uint64(1 << 63)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fromJS(jsEval(t, tt.src), 0)
			if err != nil {
				t.Fatalf("fromJS(%s): %v", tt.src, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("fromJS(%s) = %#v, want %#v", tt.src, got, tt.want)
			}
		})
	}
}

func TestFromJSRefuses(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string // in the error's text
	}{
		{name: "NaN", src: "NaN", want: "NaN"},
		{name: "Infinity", src: "Infinity", want: "NaN and infinities"},
		{name: "-Infinity", src: "-Infinity", want: "NaN and infinities"},
		{name: "NaN member names its key", src: "({a: {b: NaN}})", want: `"a": "b": `},
		{name: "NaN in an array", src: "[1, NaN]", want: "NaN"},
		{name: "BigInt past uint64", src: "2n**64n", want: "BigInt 18446744073709551616 does not fit 64 bits"},
		{name: "BigInt below int64", src: "-(2n**63n) - 1n", want: "does not fit 64 bits"},
		{name: "function", src: "function f() {}", want: "a function"},
		{name: "symbol", src: `Symbol("s")`, want: "a symbol"},
		{name: "cycle", src: "(() => { const a = {}; a.self = a; return a })()", want: "nested deeper than 64 levels (a cycle?)"},
		{name: "too deep", src: `JSON.parse("[".repeat(65) + "]".repeat(65))`, want: "nested deeper than 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := fromJS(jsEval(t, tt.src), 0)
			if !errors.Is(err, errNotAValue) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("fromJS(%s) error = %v, want errNotAValue mentioning %q", tt.src, err, tt.want)
			}
		})
	}
	// 64 levels are allowed.
	if _, err := fromJS(jsEval(t, `JSON.parse("[".repeat(64) + "]".repeat(64))`), 0); err != nil {
		t.Errorf("64 levels of arrays: %v", err)
	}
}

func TestToJS(t *testing.T) {
	type custom struct{ A int }
	tests := []struct {
		name string
		v    any
		want string // describe's text of the JavaScript value
	}{
		{name: "nil", v: nil, want: "null"},
		{name: "bool", v: true, want: `boolean:true`},
		{name: "string", v: "héllo", want: `string:"héllo"`},
		{name: "float", v: 1.5, want: "1.5"},
		{name: "integral float", v: 2.0, want: "2"},
		{name: "int", v: int64(-42), want: "-42"},
		{name: "max safe int", v: int64(1<<53 - 1), want: "9007199254740991"},
		{name: "min safe int", v: int64(-(1<<53 - 1)), want: "-9007199254740991"},
		{name: "int past 2^53 is a BigInt", v: int64(1 << 53), want: "9007199254740992n"},
		{name: "int below -2^53 is a BigInt", v: int64(math.MinInt64), want: "-9223372036854775808n"},
		{name: "small uint", v: uint64(7), want: "7"},
		{name: "large uint is a BigInt", v: uint64(math.MaxUint64), want: "18446744073709551615n"},
		{name: "bytes", v: []byte{1, 2, 255}, want: "u8[1,2,255]"},
		{name: "empty bytes", v: []byte{}, want: "u8[]"},
		{name: "array", v: []any{int64(1), "a", nil, []any{}}, want: `[1,string:"a",null,[]]`},
		{name: "object in sorted key order", v: map[string]any{"b": int64(1), "a": map[string]any{"z": nil, "y": []byte{3}}},
			want: `{"a":{"y":u8[3],"z":null},"b":1}`},
		{name: "another Go number as text", v: 5, want: `string:"5"`},
		{name: "a Go type of its own as a placeholder", v: custom{A: 1}, want: `string:"(other)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describe.Invoke(toJS(tt.v)).String(); got != tt.want {
				t.Errorf("toJS(%#v) is %s, want %s", tt.v, got, tt.want)
			}
		})
	}
}

// TestRoundTrip: every value of the message model comes back from
// JavaScript as it went, as a message received and published again does.
func TestRoundTrip(t *testing.T) {
	for _, v := range []any{
		nil, true, false, "", "x", int64(0), int64(1<<53 - 1), int64(1 << 53), int64(math.MinInt64), int64(math.MaxInt64),
		uint64(1 << 63), uint64(math.MaxUint64), 1.5, -1e-300, []byte{0, 1}, []any{int64(1), []any{nil}},
		map[string]any{"a": []any{map[string]any{"b": []byte{2}}}, "c": 0.25},
	} {
		got, err := fromJS(toJS(v), 0)
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("fromJS(toJS(%#v)) = %#v, %v", v, got, err)
		}
	}
}

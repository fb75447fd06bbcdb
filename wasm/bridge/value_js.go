//go:build js && wasm

package bridge

import (
	"errors"
	"math"
	"strconv"
	"syscall/js"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// maxSafeInteger is Number.MAX_SAFE_INTEGER: integers up to it are exact
// in a JavaScript number, larger ones cross as BigInt.
const maxSafeInteger = 1<<53 - 1

// errNotAValue reports a JavaScript value that has no message form.
var errNotAValue = errors.New("bridge: not a message value")

var (
	jsObject      = js.Global().Get("Object")
	jsArray       = js.Global().Get("Array")
	jsUint8Array  = js.Global().Get("Uint8Array")
	jsArrayBuffer = js.Global().Get("ArrayBuffer")
	jsBigInt      = js.Global().Get("BigInt")
	jsString      = js.Global().Get("String")
)

// fromJS converts a JavaScript value into the canonical message model,
// the way JSON.stringify would walk it: undefined and functions inside
// objects are left out, objects with toJSON (Date) are converted first.
// Beyond JSON, binary data (Uint8Array, ArrayBuffer and other views) is
// []byte and BigInt a 64-bit integer.
func fromJS(v js.Value, depth int) (any, error) {
	t, ok := typeOf(v)
	if !ok {
		return bigIntFromJS(v)
	}
	switch t {
	case js.TypeUndefined, js.TypeNull:
		return nil, nil
	case js.TypeBoolean:
		return v.Bool(), nil
	case js.TypeNumber:
		return numberFromJS(v.Float())
	case js.TypeString:
		return v.String(), nil
	case js.TypeObject:
		if depth >= codec.MaxDepth {
			return nil, errtext.Kind(errNotAValue, "nested deeper than "+strconv.Itoa(codec.MaxDepth)+" levels (a cycle?)")
		}
		return objectFromJS(v, depth)
	}
	return nil, errtext.Kind(errNotAValue, "a "+t.String())
}

// typeOf returns v's type. syscall/js has no type for BigInt and panics
// on one ("bad type flag": wasm_exec.js tags every value whose typeof it
// does not list, and BigInt is the only one left); ok is false then.
// wasm_exec.js always comes from the Go release that built sluice.wasm, so
// this holds for a given build.
func typeOf(v js.Value) (t js.Type, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return v.Type(), true
}

// numberFromJS keeps integers that a number holds exactly as int64.
func numberFromJS(f float64) (any, error) {
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return nil, errtext.Kind(errNotAValue, "NaN and infinities have no message form")
	case f == math.Trunc(f) && math.Abs(f) <= maxSafeInteger:
		return int64(f), nil
	}
	return f, nil
}

// bigIntFromJS converts a BigInt that fits 64 bits.
func bigIntFromJS(v js.Value) (any, error) {
	s := jsString.Invoke(v).String()
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return n, nil
	}
	return nil, errtext.Kind(errNotAValue, "BigInt "+s+" does not fit 64 bits")
}

// objectFromJS converts arrays, binary data and plain objects.
func objectFromJS(v js.Value, depth int) (any, error) {
	switch {
	case jsArray.Call("isArray", v).Bool():
		out := make([]any, v.Length())
		for i := range out {
			e, err := fromJS(v.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case v.InstanceOf(jsUint8Array):
		return bytesFromJS(v), nil
	case v.InstanceOf(jsArrayBuffer):
		return bytesFromJS(jsUint8Array.New(v)), nil
	case jsArrayBuffer.Call("isView", v).Bool():
		return bytesFromJS(jsUint8Array.New(v.Get("buffer"), v.Get("byteOffset"), v.Get("byteLength"))), nil
	case isFunction(v.Get("toJSON")):
		return fromJS(v.Call("toJSON"), depth+1)
	}
	keys := jsObject.Call("keys", v)
	out := make(map[string]any, keys.Length())
	for i := range keys.Length() {
		k := keys.Index(i).String()
		f := v.Get(k)
		if t, ok := typeOf(f); ok && (t == js.TypeUndefined || t == js.TypeFunction || t == js.TypeSymbol) {
			continue
		}
		e, err := fromJS(f, depth+1)
		if err != nil {
			return nil, errtext.Wrap(strconv.Quote(k), err)
		}
		out[k] = e
	}
	return out, nil
}

// isFunction reports whether v is a JavaScript function.
func isFunction(v js.Value) bool {
	t, ok := typeOf(v)
	return ok && t == js.TypeFunction
}

// bytesFromJS copies a Uint8Array into Go memory.
func bytesFromJS(u8 js.Value) []byte {
	b := make([]byte, u8.Length())
	js.CopyBytesToGo(b, u8)
	return b
}

// toJS converts a message of the canonical model into a JavaScript value.
func toJS(v any) js.Value {
	switch x := v.(type) {
	case nil:
		return js.Null()
	case bool, float64, string:
		return js.ValueOf(x)
	case int64:
		if x >= -maxSafeInteger && x <= maxSafeInteger {
			return js.ValueOf(float64(x))
		}
		return jsBigInt.Invoke(strconv.FormatInt(x, 10))
	case uint64:
		if x <= maxSafeInteger {
			return js.ValueOf(float64(x))
		}
		return jsBigInt.Invoke(strconv.FormatUint(x, 10))
	case []byte:
		u8 := jsUint8Array.New(len(x))
		js.CopyBytesToJS(u8, x)
		return u8
	case []any:
		a := jsArray.New(len(x))
		for i, e := range x {
			a.SetIndex(i, toJS(e))
		}
		return a
	case map[string]any:
		// In the order of the wire (sorted), not Go's random map order.
		o := jsObject.New()
		var buf [16]string
		for _, k := range codec.SortedKeys(buf[:0], x) {
			o.Set(k, toJS(x[k]))
		}
		return o
	}
	// The codecs decode nothing else; a Go caller's own type is shown as
	// text rather than lost, as far as errtext.Text renders it without
	// fmt (a String or Error method, a number).
	return js.ValueOf(errtext.Text(v))
}

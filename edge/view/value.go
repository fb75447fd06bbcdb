package view

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// kind is the type of a value in an expression.
type kind uint8

const (
	kNull kind = iota // null, and a missing field
	kBool
	kInt   // i
	kFloat // f, always finite
	kString
	kBinary
	kArray // b is the raw msgpack item, i its number of items
	kMap   // b is the raw msgpack item, i its number of pairs
)

// value is what an expression computes. It never allocates: strings and
// binary alias the message, a literal or the evaluator's scratch buffer,
// and arrays and maps stay msgpack.
type value struct {
	k kind
	i int64
	f float64
	b []byte
}

func intValue(i int64) value     { return value{k: kInt, i: i} }
func stringValue(b []byte) value { return value{k: kString, b: b} }

func boolValue(t bool) value {
	if t {
		return value{k: kBool, i: 1}
	}
	return value{k: kBool}
}

// floatValue is f, or null if f is not finite: msgpack could carry a NaN
// but no codec of the canonical model can, so arithmetic that leaves the
// finite floats (1e308 * 10) gives null as a division by zero does.
func floatValue(f float64) value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return value{}
	}
	return value{k: kFloat, f: f}
}

// number returns a numeric value as a float.
func (v *value) float() float64 {
	if v.k == kInt {
		return float64(v.i)
	}
	return v.f
}

func (v *value) numeric() bool { return v.k == kInt || v.k == kFloat }

// decode reads the value of one msgpack item, which Scanner.Skip or
// skip has checked. An unsigned integer above math.MaxInt64 becomes a
// float (the one place a number loses precision), and an item that
// cannot be read is null.
func decode(item []byte) value {
	var v value
	decodeTo(item, &v)
	return v
}

// decodeTo is decode into *v, which must be null: the evaluator's hot
// path, where returning the value would copy it.
func decodeTo(item []byte, v *value) {
	if len(item) > 0 { // the commonest items, without the call of Head
		switch c := item[0]; {
		case c <= 0x7f:
			v.k, v.i = kInt, int64(c)
			return
		case c&0xe0 == 0xa0 && len(item) > int(c&0x1f):
			v.k, v.b = kString, item[1:1+int(c&0x1f)]
			return
		case c == 0xcb && len(item) >= 9:
			setFloat(v, math.Float64frombits(binary.BigEndian.Uint64(item[1:])))
			return
		}
	}
	k, n, i, err := wire.Head(item, 0)
	if err != nil {
		return
	}
	switch k {
	case wire.KindBool:
		v.k, v.i = kBool, int64(n)
	case wire.KindInt:
		v.k, v.i = kInt, int64(n)
	case wire.KindUint:
		if n > math.MaxInt64 {
			setFloat(v, float64(n))
			return
		}
		v.k, v.i = kInt, int64(n)
	case wire.KindFloat32:
		setFloat(v, float64(math.Float32frombits(uint32(n))))
	case wire.KindFloat64:
		setFloat(v, math.Float64frombits(n))
	case wire.KindString, wire.KindBinary:
		if n > uint64(len(item)-i) {
			return
		}
		v.k, v.b = kString, item[i:i+int(n)]
		if k == wire.KindBinary {
			v.k = kBinary
		}
	case wire.KindArray:
		v.k, v.i, v.b = kArray, int64(n), item
	case wire.KindMap:
		v.k, v.i, v.b = kMap, int64(n), item
	}
}

// setFloat sets *v to f, or leaves it null if f is not finite.
func setFloat(v *value, f float64) {
	if !math.IsNaN(f) && !math.IsInf(f, 0) {
		v.k, v.f = kFloat, f
	}
}

// appendValue appends v in msgpack, as the edge's canonical encoder
// would (integers in their shortest form, floats as 64-bit floats).
func appendValue(dst []byte, v value) []byte {
	switch v.k {
	case kBool:
		return wire.AppendBool(dst, v.i == 1)
	case kInt:
		return wire.AppendInt(dst, v.i)
	case kFloat:
		return wire.AppendFloat(dst, v.f)
	case kString:
		return wire.AppendString(dst, v.b)
	case kBinary:
		return wire.AppendBinary(dst, v.b)
	case kArray, kMap:
		return append(dst, v.b...)
	}
	return wire.AppendNil(dst)
}

// compare orders a and b when they are of comparable kinds: two numbers
// (integers exactly, else as floats), two strings or two binaries (byte
// by byte, which for UTF-8 is code point order), two booleans (false
// first). Arrays and maps are only equal or not (cmp 0 or 1) when both
// are arrays or both maps, by their encodings: deep equality for the
// edge's canonical messages, where keys are sorted and numbers shortest.
// ok is false for every other pair: null with anything, and values of
// different kinds, which SQL would coerce and JSON cannot ('5' and 5).
func compare(a, b *value) (cmp int, ordered, ok bool) {
	switch {
	case a.k == kInt && b.k == kInt:
		return cmpInt(a.i, b.i), true, true
	case a.numeric() && b.numeric():
		return cmpFloat(a.float(), b.float()), true, true
	case a.k != b.k:
		return 0, false, false
	}
	switch a.k {
	case kString, kBinary:
		return bytes.Compare(a.b, b.b), true, true
	case kBool:
		return cmpInt(a.i, b.i), true, true
	case kArray, kMap:
		if bytes.Equal(a.b, b.b) {
			return 0, false, true
		}
		return 1, false, true
	}
	return 0, false, false
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// equal is a = b: null if either is null, false for values of
// different kinds.
func equal(a, b *value) tri {
	if a.k == kNull || b.k == kNull {
		return tNull
	}
	if a.k == kInt && b.k == kInt {
		return triOf(a.i == b.i)
	}
	c, _, ok := compare(a, b)
	return triOf(ok && c == 0)
}

// order applies an ordering comparison: null unless a and b are of one
// ordered kind (numbers, strings, binary, booleans).
func order(o op, a, b *value) tri {
	c, ordered, ok := compare(a, b)
	if !ok || !ordered {
		return tNull
	}
	switch o {
	case opLt:
		return triOf(c < 0)
	case opLe:
		return triOf(c <= 0)
	case opGt:
		return triOf(c > 0)
	}
	return triOf(c >= 0)
}

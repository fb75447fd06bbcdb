package wire

import (
	"math"
)

// Type bytes of the values without a length.
const (
	typeNil     = 0xc0
	typeFalse   = 0xc2
	typeTrue    = 0xc3
	typeFloat64 = 0xcb
)

// AppendNil appends msgpack nil.
func AppendNil(dst []byte) []byte { return append(dst, typeNil) }

// AppendBool appends b.
func AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, typeTrue)
	}
	return append(dst, typeFalse)
}

// AppendInt appends n in its shortest form; a non-negative n is written
// as AppendUint writes it, as every msgpack encoder of Sluice does.
func AppendInt(dst []byte, n int64) []byte {
	switch {
	case n >= 0:
		return AppendUint(dst, uint64(n))
	case n >= -32:
		return append(dst, byte(n)) // negative fixint
	case n >= math.MinInt8:
		return append(dst, 0xd0, byte(n))
	case n >= math.MinInt16:
		return appendUint16(append(dst, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return appendUint32(append(dst, 0xd2), uint32(n))
	}
	return appendUint64(append(dst, 0xd3), uint64(n))
}

// AppendUint appends n in its shortest form.
func AppendUint(dst []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(dst, byte(n)) // positive fixint
	case n <= math.MaxUint8:
		return append(dst, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return appendUint16(append(dst, 0xcd), uint16(n))
	case n <= math.MaxUint32:
		return appendUint32(append(dst, 0xce), uint32(n))
	}
	return appendUint64(append(dst, 0xcf), n)
}

// AppendFloat appends f as a 64-bit float, whatever its value; the
// canonical model has no NaN or infinities, which AppendValue refuses.
func AppendFloat(dst []byte, f float64) []byte {
	return appendUint64(append(dst, typeFloat64), math.Float64bits(f))
}

// AppendString appends s, a string or its bytes (no copy either way),
// with the shortest string header. It does not check UTF-8, nor that
// len(s) fits the 32-bit length msgpack has room for.
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	n := len(s)
	switch {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = appendUint16(append(dst, 0xda), uint16(n))
	default:
		dst = appendUint32(append(dst, 0xdb), uint32(n))
	}
	return append(dst, s...)
}

// AppendBinary appends b with the shortest binary header. Like
// AppendString, it does not check that len(b) fits 32 bits.
func AppendBinary(dst []byte, b []byte) []byte {
	n := len(b)
	switch {
	case n <= math.MaxUint8:
		dst = append(dst, 0xc4, byte(n))
	case n <= math.MaxUint16:
		dst = appendUint16(append(dst, 0xc5), uint16(n))
	default:
		dst = appendUint32(append(dst, 0xc6), uint32(n))
	}
	return append(dst, b...)
}

// AppendArrayHead appends the header of an array of n items, which the
// caller appends next.
func AppendArrayHead(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return appendUint16(append(dst, 0xdc), uint16(n))
	}
	return appendUint32(append(dst, 0xdd), uint32(n))
}

// AppendMapHead appends the header of a map of n pairs, whose keys and
// values the caller appends next, in turn.
func AppendMapHead(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x80|byte(n))
	case n <= math.MaxUint16:
		return appendUint16(append(dst, 0xde), uint16(n))
	}
	return appendUint32(append(dst, 0xdf), uint32(n))
}

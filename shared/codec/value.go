package codec

import (
	"math"

	"github.com/sluicehq/sluice/shared/rtm"
)

// Primitives writes the items of one encoding, for AppendValue and
// AppendBody to walk the canonical model with. Each codec implements it
// with a zero-size type passed by value; the walk is the same for all, so a
// message encodes alike in every codec (keys sorted, depth bounded, other
// widths normalized) and only the bytes differ.
//
// A method returning an error refuses a value the encoding cannot carry,
// with an *rtm.Error of code invalid_format; the walk then stops and the
// caller's dst is returned unchanged.
type Primitives interface {
	// AppendNil appends null.
	AppendNil(dst []byte) []byte
	// AppendBool appends b.
	AppendBool(dst []byte, b bool) []byte
	// AppendInt appends n.
	AppendInt(dst []byte, n int64) []byte
	// AppendUint appends n, which is above math.MaxInt64 in the model.
	AppendUint(dst []byte, n uint64) []byte
	// AppendFloat appends f, which the walk has checked is finite.
	AppendFloat(dst []byte, f float64) []byte
	// AppendString appends a message string, checked as the encoding
	// requires (UTF-8, length).
	AppendString(dst []byte, s string) ([]byte, error)
	// AppendBinary appends a message []byte, checked as the encoding
	// requires.
	AppendBinary(dst []byte, b []byte) ([]byte, error)
	// AppendText appends a string field of a PDU body, unchecked: those
	// come from the edge or were checked when decoded.
	AppendText(dst []byte, s string) []byte
	// AppendArrayStart opens an array of n items.
	AppendArrayStart(dst []byte, n int) []byte
	// AppendArrayItem comes before item i of an array (a separator).
	AppendArrayItem(dst []byte, i int) []byte
	// AppendArrayEnd closes an array.
	AppendArrayEnd(dst []byte) []byte
	// AppendMapStart opens a map of n pairs.
	AppendMapStart(dst []byte, n int) []byte
	// AppendMapKey appends key k of pair i, and what separates it from
	// the pair before and from its value.
	AppendMapKey(dst []byte, i int, k string) ([]byte, error)
	// AppendMapEnd closes a map.
	AppendMapEnd(dst []byte) []byte
}

// AppendValue appends v, a message value in the canonical model, in the
// encoding of p. Other integer widths, float32 and maps keyed by any with
// string keys are accepted too, and an rtm.RawValue, already in p's
// encoding, is copied as is (an empty one as null). Maps are written with
// their keys in SortedKeys order. NaN, infinities, non-string map keys,
// nesting deeper than MaxDepth, other types and what p refuses are an
// *rtm.Error with code invalid_format, and dst is returned unchanged.
//
// P is a type parameter rather than an interface so that passing a codec's
// zero-size primitives converts nothing to an interface and allocates
// nothing.
func AppendValue[P Primitives](dst []byte, v any, p P) ([]byte, error) {
	out, err := appendValue(dst, v, p, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendValue[P Primitives](dst []byte, v any, p P, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return p.AppendNil(dst), nil
	case bool:
		return p.AppendBool(dst, x), nil
	case int64:
		return p.AppendInt(dst, x), nil
	case uint64:
		return p.AppendUint(dst, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, rtm.Invalid(rtm.MessageNonFinite)
		}
		return p.AppendFloat(dst, x), nil
	case string:
		return p.AppendString(dst, x)
	case []byte:
		return p.AppendBinary(dst, x)
	case rtm.RawValue:
		if len(x) == 0 { // never a broken frame
			return p.AppendNil(dst), nil
		}
		return append(dst, x...), nil
	case *rtm.RawValue:
		// A pointer boxes without allocating, where a RawValue does not.
		if x == nil || len(*x) == 0 {
			return p.AppendNil(dst), nil
		}
		return append(dst, *x...), nil
	case []any:
		return appendArray(dst, x, p, depth)
	case map[string]any:
		return appendMap(dst, x, p, depth)
	case map[any]any:
		m, err := StringMap(x)
		if err != nil {
			return dst, err
		}
		return appendMap(dst, m, p, depth)
	}
	n, err := Normalize(v) // other widths; containers were handled above
	if err != nil {
		return dst, err
	}
	return appendValue(dst, n, p, depth)
}

func appendArray[P Primitives](dst []byte, a []any, p P, depth int) ([]byte, error) {
	if depth >= MaxDepth {
		return dst, rtm.Invalid(rtm.MessageTooDeep)
	}
	dst = p.AppendArrayStart(dst, len(a))
	for i, e := range a {
		var err error
		if dst, err = appendValue(p.AppendArrayItem(dst, i), e, p, depth+1); err != nil {
			return dst, err
		}
	}
	return p.AppendArrayEnd(dst), nil
}

func appendMap[P Primitives](dst []byte, m map[string]any, p P, depth int) ([]byte, error) {
	if depth >= MaxDepth {
		return dst, rtm.Invalid(rtm.MessageTooDeep)
	}
	var buf [16]string // no allocation for the keys of a small map
	keys := SortedKeys(buf[:0], m)
	dst = p.AppendMapStart(dst, len(keys))
	for i, k := range keys {
		var err error
		if dst, err = p.AppendMapKey(dst, i, k); err != nil {
			return dst, err
		}
		if dst, err = appendValue(dst, m[k], p, depth+1); err != nil {
			return dst, err
		}
	}
	return p.AppendMapEnd(dst), nil
}

// Once marks a PDU key seen, or returns the error for a key that came
// twice.
func Once(seen *bool) error {
	if *seen {
		return rtm.Invalid(rtm.PDUKeyTwice)
	}
	*seen = true
	return nil
}

package wire

import (
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendValue appends the msgpack of one message value in the canonical
// model of package rtm. Other integer widths, float32 and maps keyed by any
// with string keys are accepted too, and an rtm.RawValue, already msgpack,
// is copied as is (an empty one as nil). Map keys are written in sorted
// order, integers in their shortest form and floats as 64-bit floats, so a
// value always encodes to the same bytes. NaN, infinities, strings that are
// not valid UTF-8 or longer than 4 GiB, non-string map keys, nesting deeper
// than codec.MaxDepth and other types are an *rtm.Error with code
// invalid_format, and dst is returned unchanged.
func AppendValue(dst []byte, v any) ([]byte, error) {
	out, err := appendValue(dst, v, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return AppendNil(dst), nil
	case bool:
		return AppendBool(dst, x), nil
	case int64:
		return AppendInt(dst, x), nil
	case uint64:
		return AppendUint(dst, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, codec.NonFiniteError()
		}
		return AppendFloat(dst, x), nil
	case string:
		if !utf8.ValidString(x) {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message string is not valid UTF-8")
		}
		if uint64(len(x)) > math.MaxUint32 {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message string is too long")
		}
		return AppendString(dst, x), nil
	case []byte:
		if uint64(len(x)) > math.MaxUint32 {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message binary is too long")
		}
		return AppendBinary(dst, x), nil
	case rtm.RawValue:
		if len(x) == 0 { // never a broken frame
			return AppendNil(dst), nil
		}
		return append(dst, x...), nil
	case []any:
		return appendArray(dst, x, depth)
	case map[string]any:
		return appendMap(dst, x, depth)
	case map[any]any:
		m, err := codec.StringMap(x)
		if err != nil {
			return dst, err
		}
		return appendMap(dst, m, depth)
	}
	n, err := codec.Normalize(v) // other widths; containers were handled above
	if err != nil {
		return dst, err
	}
	return appendValue(dst, n, depth)
}

func appendArray(dst []byte, a []any, depth int) ([]byte, error) {
	if depth >= codec.MaxDepth {
		return dst, codec.TooDeepError()
	}
	dst = AppendArrayHead(dst, len(a))
	for _, e := range a {
		var err error
		if dst, err = appendValue(dst, e, depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func appendMap(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if depth >= codec.MaxDepth {
		return dst, codec.TooDeepError()
	}
	var buf [16]string // no allocation for the keys of a small map
	keys := sortKeys(buf[:0], m)
	dst = AppendMapHead(dst, len(keys))
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message map key is not valid UTF-8")
		}
		var err error
		if dst, err = appendValue(AppendString(dst, k), m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

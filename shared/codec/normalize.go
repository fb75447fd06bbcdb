package codec

import (
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/rtm"
)

// MaxDepth is how deeply arrays and maps may nest inside one message
// (rtm.MaxDepth). A message nested deeper is refused with invalid_format by
// Normalize and by every codec's AppendValue, so no decoder or encoder
// recurses without bound.
const MaxDepth = rtm.MaxDepth

// Normalize converts a value decoded by a codec library into the canonical
// value model of package rtm: nil, bool, int64, uint64 (only above
// math.MaxInt64), float64, string, []byte, []any and map[string]any.
//
// It accepts every Go integer width, float32, number literals (json.Number;
// natively only, see literal_notjs.go) and maps keyed by any with string
// keys. It refuses, with an *rtm.Error of
// code invalid_format, what some codec could not carry: a map key that is not
// a string, nesting deeper than MaxDepth, NaN or an infinity, a string that
// is not valid UTF-8, and any other type. So a message accepted from one
// codec can be delivered in every codec.
//
// Normalize works in place: the []any and map[string]any of v are updated
// and returned, not copied.
func Normalize(v any) (any, error) { return normalize(v, 0) }

func normalize(v any, depth int) (any, error) {
	switch x := v.(type) {
	case nil, bool, int64, []byte:
		return v, nil
	case string:
		if !utf8.ValidString(x) {
			return nil, rtm.Invalid(rtm.MessageNotUTF8)
		}
		return v, nil
	case float64:
		return checkFloat(x)
	case float32:
		return checkFloat(float64(x))
	case uint64:
		return fromUint(x), nil
	case []any:
		return normalizeSlice(x, depth)
	case map[string]any:
		return normalizeMap(x, depth)
	case map[any]any:
		m, err := StringMap(x)
		if err != nil {
			return nil, err
		}
		return normalizeMap(m, depth)
	}
	if n, ok, err := normalizeLiteral(v); ok {
		return n, err
	}
	return normalizeInt(v)
}

// normalizeInt widens the other integer types; anything else is refused.
func normalizeInt(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case uint:
		return fromUint(uint64(x)), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uintptr:
		return fromUint(uint64(x)), nil
	}
	return nil, rtm.Invalid(rtm.MessageUnsupported)
}

func normalizeSlice(s []any, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, rtm.Invalid(rtm.MessageTooDeep)
	}
	for i, e := range s {
		n, err := normalize(e, depth+1)
		if err != nil {
			return nil, err
		}
		s[i] = n
	}
	return s, nil
}

func normalizeMap(m map[string]any, depth int) (any, error) {
	if depth >= MaxDepth {
		return nil, rtm.Invalid(rtm.MessageTooDeep)
	}
	for k, e := range m {
		if !utf8.ValidString(k) {
			return nil, rtm.Invalid(rtm.MessageKeyNotUTF8)
		}
		n, err := normalize(e, depth+1)
		if err != nil {
			return nil, err
		}
		m[k] = n
	}
	return m, nil
}

func fromUint(u uint64) any {
	if u > math.MaxInt64 {
		return u
	}
	return int64(u)
}

func checkFloat(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, rtm.Invalid(rtm.MessageNonFinite)
	}
	return f, nil
}

// StringMap converts a map keyed by any into a map keyed by string, as some
// libraries decode maps; a key that is not a string is an *rtm.Error with
// code invalid_format. The values are not converted.
func StringMap(m map[any]any) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for k, e := range m {
		s, ok := k.(string)
		if !ok {
			return nil, rtm.Invalid(rtm.MessageKeyType)
		}
		out[s] = e
	}
	return out, nil
}

// NormalizeBody normalizes, in place, the message values of a body just
// decoded into v: the values of an rtm.ValueCarrier, or v itself when it
// points to an any, a map[string]any or a []any. Other bodies carry no
// message values and are left alone.
func NormalizeBody(v any) error {
	var err error
	switch b := v.(type) {
	case rtm.ValueCarrier:
		for _, p := range b.Values() {
			if *p, err = Normalize(*p); err != nil {
				return err
			}
		}
	case *any:
		*b, err = Normalize(*b)
	case *map[string]any:
		if *b != nil {
			_, err = normalizeMap(*b, 0)
		}
	case *[]any:
		if *b != nil {
			_, err = normalizeSlice(*b, 0)
		}
	}
	return err
}

package wire

import (
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendValue appends the msgpack of one message value in the canonical
// model of package rtm, as codec.AppendValue walks it with Primitives.
// Other integer widths, float32 and maps keyed by any with string keys are
// accepted too, and an rtm.RawValue, already msgpack, is copied as is (an
// empty one as nil). Map keys are written in sorted order, integers in
// their shortest form and floats as 64-bit floats, so a value always
// encodes to the same bytes. NaN, infinities, strings that are not valid
// UTF-8 or longer than 4 GiB, non-string map keys, nesting deeper than
// codec.MaxDepth and other types are an *rtm.Error with code
// invalid_format, and dst is returned unchanged.
func AppendValue(dst []byte, v any) ([]byte, error) {
	return codec.AppendValue(dst, v, Primitives{})
}

// Primitives is the codec.Primitives of msgpack, for codec.AppendValue
// and codec.AppendBody. Message strings must be valid UTF-8 and strings
// and binary at most 4 GiB long, which a msgpack length has room for.
type Primitives struct{}

// AppendNil appends msgpack nil.
func (Primitives) AppendNil(dst []byte) []byte { return AppendNil(dst) }

// AppendBool appends b.
func (Primitives) AppendBool(dst []byte, b bool) []byte { return AppendBool(dst, b) }

// AppendInt appends n in its shortest form.
func (Primitives) AppendInt(dst []byte, n int64) []byte { return AppendInt(dst, n) }

// AppendUint appends n in its shortest form.
func (Primitives) AppendUint(dst []byte, n uint64) []byte { return AppendUint(dst, n) }

// AppendFloat appends f as a 64-bit float.
func (Primitives) AppendFloat(dst []byte, f float64) []byte { return AppendFloat(dst, f) }

// AppendString appends s, refusing invalid UTF-8 and more than 4 GiB.
func (Primitives) AppendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, rtm.Invalid(rtm.MessageNotUTF8)
	}
	if uint64(len(s)) > math.MaxUint32 {
		return dst, rtm.Invalid(rtm.MessageTooLong)
	}
	return AppendString(dst, s), nil
}

// AppendBinary appends b, refusing more than 4 GiB.
func (Primitives) AppendBinary(dst []byte, b []byte) ([]byte, error) {
	if uint64(len(b)) > math.MaxUint32 {
		return dst, rtm.Invalid(rtm.MessageTooLong)
	}
	return AppendBinary(dst, b), nil
}

// AppendText appends s unchecked.
func (Primitives) AppendText(dst []byte, s string) []byte { return AppendString(dst, s) }

// AppendArrayStart appends the header of an array of n items.
func (Primitives) AppendArrayStart(dst []byte, n int) []byte { return AppendArrayHead(dst, n) }

// AppendArrayItem appends nothing: msgpack items follow one another.
func (Primitives) AppendArrayItem(dst []byte, _ int) []byte { return dst }

// AppendArrayEnd appends nothing: the header counted the items.
func (Primitives) AppendArrayEnd(dst []byte) []byte { return dst }

// AppendMapStart appends the header of a map of n pairs.
func (Primitives) AppendMapStart(dst []byte, n int) []byte { return AppendMapHead(dst, n) }

// AppendMapKey appends k, refusing invalid UTF-8.
func (Primitives) AppendMapKey(dst []byte, _ int, k string) ([]byte, error) {
	if !utf8.ValidString(k) {
		return dst, rtm.Invalid(rtm.MessageKeyNotUTF8)
	}
	return AppendString(dst, k), nil
}

// AppendMapEnd appends nothing: the header counted the pairs.
func (Primitives) AppendMapEnd(dst []byte) []byte { return dst }

package cbor

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Simple values and the float head.
const (
	cborFalse   = 0xf4
	cborTrue    = 0xf5
	cborNull    = 0xf6
	cborFloat64 = 0xfb
)

// AppendPDU appends p as a CBOR map {"action","id"?,"body"}. The id is left
// out when p.ID is absent and a nil body is written as an empty map. Bodies
// that carry message values (PublishBody, ReadReply, SubscriptionData, maps)
// are written by hand like AppendValue; the others go through the library.
// An action or string id that is not valid UTF-8 is refused, since a CBOR
// text string must be. On error dst is returned unchanged.
func (Codec) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	if !utf8.ValidString(p.Action) || (p.ID.Kind == rtm.IDString && !utf8.ValidString(p.ID.Str)) {
		return dst, fmt.Errorf("cbor: action or id of %q is not valid UTF-8", p.Action)
	}
	start := len(dst)
	pairs := uint64(2)
	if p.ID.Kind == rtm.IDInt || p.ID.Kind == rtm.IDString {
		pairs = 3
	}
	dst = appendHead(dst, majorMap, pairs)
	dst = appendText(dst, "action")
	dst = appendText(dst, p.Action)
	switch p.ID.Kind {
	case rtm.IDInt:
		dst = appendInt(appendText(dst, "id"), p.ID.Int)
	case rtm.IDString:
		dst = appendText(appendText(dst, "id"), p.ID.Str)
	}
	dst = appendText(dst, "body")
	dst, err := codec.AppendBody(dst, p.Body, primitives{}, appendOther)
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// AppendData appends an rtm/subscription/data PDU whose messages were
// encoded by AppendValue, splicing them in as they are. It is the fan-out's
// hot path: with room in dst it does not allocate. subscriptionID must be
// valid UTF-8, as every string a codec decodes is.
func (Codec) AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	dst = appendHead(dst, majorMap, 2)
	dst = appendText(dst, "action")
	dst = appendText(dst, rtm.ActionSubscriptionData)
	dst = appendText(dst, "body")
	dst = appendHead(dst, majorMap, 3)
	dst = appendText(dst, "subscription_id")
	dst = appendText(dst, subscriptionID)
	dst = appendText(dst, "position")
	dst = appendHead(dst, majorText, uint64(textLen(pos)))
	dst = pos.AppendText(dst)
	dst = appendText(dst, "messages")
	dst = appendHead(dst, majorArray, uint64(len(messages)))
	for _, m := range messages {
		dst = append(dst, m...)
	}
	return dst
}

// textLen is the length of pos's text form, needed before writing it.
func textLen(pos rtm.Position) int { return digits(pos.Epoch) + 1 + digits(pos.Offset) }

func digits(n uint64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// AppendValue appends the CBOR of one message value in the canonical model.
// Other integer widths, float32 and maps keyed by any with string keys are
// accepted too, and an rtm.RawValue, already CBOR, is copied as is (an
// empty one as null). Map keys are written in sorted order and floats as
// 64-bit floats. NaN, infinities, strings that are not valid UTF-8,
// non-string map keys, nesting deeper than codec.MaxDepth and other types
// are an *rtm.Error with code invalid_format, and dst is returned
// unchanged.
func (Codec) AppendValue(dst []byte, v any) ([]byte, error) {
	return codec.AppendValue(dst, v, primitives{})
}

// primitives is the codec.Primitives of CBOR. Message strings and map
// keys must be valid UTF-8, as a CBOR text string must be.
type primitives struct{}

func (primitives) AppendNil(dst []byte) []byte { return append(dst, cborNull) }

func (primitives) AppendBool(dst []byte, b bool) []byte {
	if b {
		return append(dst, cborTrue)
	}
	return append(dst, cborFalse)
}

func (primitives) AppendInt(dst []byte, n int64) []byte   { return appendInt(dst, n) }
func (primitives) AppendUint(dst []byte, n uint64) []byte { return appendHead(dst, majorUint, n) }

// AppendFloat writes f as a 64-bit float.
func (primitives) AppendFloat(dst []byte, f float64) []byte {
	return binary.BigEndian.AppendUint64(append(dst, cborFloat64), math.Float64bits(f))
}

func (primitives) AppendString(dst []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return dst, rtm.Invalid(rtm.MessageNotUTF8)
	}
	return appendText(dst, s), nil
}

func (primitives) AppendBinary(dst []byte, b []byte) ([]byte, error) {
	return append(appendHead(dst, majorBytes, uint64(len(b))), b...), nil
}

func (primitives) AppendText(dst []byte, s string) []byte { return appendText(dst, s) }

func (primitives) AppendArrayStart(dst []byte, n int) []byte {
	return appendHead(dst, majorArray, uint64(n))
}

func (primitives) AppendArrayItem(dst []byte, _ int) []byte { return dst }
func (primitives) AppendArrayEnd(dst []byte) []byte         { return dst }

func (primitives) AppendMapStart(dst []byte, n int) []byte {
	return appendHead(dst, majorMap, uint64(n))
}

func (primitives) AppendMapKey(dst []byte, _ int, k string) ([]byte, error) {
	if !utf8.ValidString(k) {
		return dst, rtm.Invalid(rtm.MessageKeyNotUTF8)
	}
	return appendText(dst, k), nil
}

func (primitives) AppendMapEnd(dst []byte) []byte { return dst }

// appendOther writes body with the library, or nothing for null.
func appendOther(dst []byte, body any) ([]byte, error) {
	enc, err := encMode.Marshal(body)
	if err != nil {
		return dst, fmt.Errorf("cbor: encode %T body: %w", body, err)
	}
	if len(enc) == 1 && enc[0] == cborNull {
		return dst, nil
	}
	return append(dst, enc...), nil
}

func appendInt(dst []byte, n int64) []byte {
	if n >= 0 {
		return appendHead(dst, majorUint, uint64(n))
	}
	return appendHead(dst, majorNeg, uint64(^n)) // -1 - n
}

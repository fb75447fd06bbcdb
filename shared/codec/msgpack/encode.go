package msgpack

import (
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Type bytes written by hand.
const (
	mpNil     = 0xc0
	mpFalse   = 0xc2
	mpTrue    = 0xc3
	mpFloat64 = 0xcb
)

// AppendPDU appends p as a msgpack map {"action","id"?,"body"}. The id is
// left out when p.ID is absent and a nil body is written as an empty map.
// Bodies that carry message values (PublishBody, ReadReply,
// SubscriptionData, maps) are written by hand like AppendValue; the others
// go through the library with their `json` tags. An action or string id
// that is not valid UTF-8 is refused, since the decoder would refuse it. On
// error dst is returned unchanged.
func (Codec) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	if !utf8.ValidString(p.Action) || (p.ID.Kind == rtm.IDString && !utf8.ValidString(p.ID.Str)) {
		return dst, fmt.Errorf("msgpack: action or id of %q is not valid UTF-8", p.Action)
	}
	start := len(dst)
	n := 2
	if p.ID.Kind == rtm.IDInt || p.ID.Kind == rtm.IDString {
		n = 3
	}
	dst = appendMapHead(dst, n)
	dst = appendStr(appendStr(dst, "action"), p.Action)
	switch p.ID.Kind {
	case rtm.IDInt:
		dst = appendInt(appendStr(dst, "id"), p.ID.Int)
	case rtm.IDString:
		dst = appendStr(appendStr(dst, "id"), p.ID.Str)
	}
	dst, err := appendBody(appendStr(dst, "body"), p.Body)
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

func appendBody(dst []byte, body any) ([]byte, error) {
	switch b := body.(type) {
	case nil, rtm.Empty, *rtm.Empty:
		return append(dst, emptyBody...), nil
	case *rtm.PublishBody:
		if b != nil {
			return appendPair(dst, "channel", b.Channel, "message", b.Message)
		}
	case rtm.PublishBody:
		return appendPair(dst, "channel", b.Channel, "message", b.Message)
	case *rtm.ReadReply:
		if b != nil {
			return appendPair(dst, "position", b.Position, "message", b.Message)
		}
	case rtm.ReadReply:
		return appendPair(dst, "position", b.Position, "message", b.Message)
	case *rtm.SubscriptionData:
		if b != nil {
			return appendDataBody(dst, b)
		}
	case rtm.SubscriptionData:
		return appendDataBody(dst, &b)
	case map[string]any, map[any]any:
		return appendValue(dst, b, 0)
	default:
		start := len(dst)
		dst, err := appendLibrary(dst, body)
		if err != nil {
			return dst, fmt.Errorf("msgpack: encode %T body: %w", body, err)
		}
		if len(dst)-start != 1 || dst[start] != mpNil {
			return dst, nil
		}
		dst = dst[:start]
	}
	return append(dst, emptyBody...), nil // a nil pointer body
}

// appendPair writes a body of a string field and a message field.
func appendPair(dst []byte, k1, s, k2 string, msg any) ([]byte, error) {
	dst = appendMapHead(dst, 2)
	dst = appendStr(appendStr(dst, k1), s)
	return appendValue(appendStr(dst, k2), msg, 0)
}

func appendDataBody(dst []byte, b *rtm.SubscriptionData) ([]byte, error) {
	dst = appendMapHead(dst, 3)
	dst = appendStr(appendStr(dst, "subscription_id"), b.SubscriptionID)
	dst = appendStr(appendStr(dst, "position"), b.Position)
	dst = appendArrayHead(appendStr(dst, "messages"), len(b.Messages))
	for _, m := range b.Messages {
		var err error
		if dst, err = appendValue(dst, m, 0); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// AppendData appends an rtm/subscription/data PDU whose messages were
// encoded by AppendValue, splicing them in as they are. It is the fan-out's
// hot path: with room in dst it does not allocate. subscriptionID must be
// valid UTF-8, as every string a codec decodes is.
func (Codec) AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	dst = appendMapHead(dst, 2)
	dst = appendStr(appendStr(dst, "action"), rtm.ActionSubscriptionData)
	dst = appendMapHead(appendStr(dst, "body"), 3)
	dst = appendStr(appendStr(dst, "subscription_id"), subscriptionID)
	dst = appendStr(dst, "position")
	if n := textLen(pos); n < 32 { // at most 41 bytes
		dst = append(dst, 0xa0|byte(n))
	} else {
		dst = append(dst, 0xd9, byte(n))
	}
	dst = pos.AppendText(dst)
	dst = appendArrayHead(appendStr(dst, "messages"), len(messages))
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

// AppendValue appends the msgpack of one message value in the canonical
// model. Other integer widths, float32 and maps keyed by any with string
// keys are accepted too, and an rtm.RawValue, already msgpack, is copied as
// is (an empty one as nil). Map keys are written in sorted order, integers
// in their shortest form and floats as 64-bit floats. NaN, infinities,
// strings that are not valid UTF-8, non-string map keys, nesting deeper
// than codec.MaxDepth and other types are an *rtm.Error with code
// invalid_format, and dst is returned unchanged.
func (Codec) AppendValue(dst []byte, v any) ([]byte, error) {
	out, err := appendValue(dst, v, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, mpNil), nil
	case bool:
		if x {
			return append(dst, mpTrue), nil
		}
		return append(dst, mpFalse), nil
	case int64:
		return appendInt(dst, x), nil
	case uint64:
		return appendUint(dst, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, codec.NonFiniteError()
		}
		return binary.BigEndian.AppendUint64(append(dst, mpFloat64), math.Float64bits(x)), nil
	case string:
		if !utf8.ValidString(x) {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message string is not valid UTF-8")
		}
		if uint64(len(x)) > math.MaxUint32 {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message string is too long")
		}
		return appendStr(dst, x), nil
	case []byte:
		if uint64(len(x)) > math.MaxUint32 {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message binary is too long")
		}
		return appendBin(dst, x), nil
	case rtm.RawValue:
		if len(x) == 0 { // never a broken frame
			return append(dst, mpNil), nil
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
	dst = appendArrayHead(dst, len(a))
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
	var buf [16]string
	keys := codec.SortedKeys(buf[:0], m)
	dst = appendMapHead(dst, len(keys))
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message map key is not valid UTF-8")
		}
		var err error
		if dst, err = appendValue(appendStr(dst, k), m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

func appendInt(dst []byte, n int64) []byte {
	switch {
	case n >= 0:
		return appendUint(dst, uint64(n))
	case n >= -32:
		return append(dst, byte(n)) // negative fixint
	case n >= math.MinInt8:
		return append(dst, 0xd0, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(n))
}

func appendUint(dst []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(dst, byte(n)) // positive fixint
	case n <= math.MaxUint8:
		return append(dst, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xcf), n)
}

func appendStr(dst []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xda), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xdb), uint32(n))
	}
	return append(dst, s...)
}

func appendBin(dst []byte, b []byte) []byte {
	n := len(b)
	switch {
	case n <= math.MaxUint8:
		dst = append(dst, 0xc4, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xc5), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xc6), uint32(n))
	}
	return append(dst, b...)
}

func appendArrayHead(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xdd), uint32(n))
}

func appendMapHead(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xde), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(dst, 0xdf), uint32(n))
}

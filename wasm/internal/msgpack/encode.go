package msgpack

import (
	"encoding/binary"
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

// AppendPDU appends p as a msgpack map {"action","id"?,"body"}, like the
// shared codec: the id is left out when absent, a nil body is an empty
// map, and the request bodies of package rtm are written as maps of their
// `json` names (omitempty honoured; keys sorted, as for every map). The
// body types the client never sends are refused. On error dst is returned
// unchanged.
func (Codec) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	if !utf8.ValidString(p.Action) || (p.ID.Kind == rtm.IDString && !utf8.ValidString(p.ID.Str)) {
		return dst, encodeError(p.Action, errUTF8)
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
	dst = appendStr(dst, "body")
	var err error
	switch b := p.Body.(type) {
	case nil, rtm.Empty, *rtm.Empty:
		dst = append(dst, emptyBody...)
	case map[string]any, map[any]any:
		dst, err = appendValue(dst, b, 0)
	default:
		var m map[string]any
		if m, err = bodyMap(b); err == nil {
			dst, err = appendValue(dst, m, 0)
		}
	}
	if err != nil {
		return dst[:start], encodeError(p.Action+" body", err)
	}
	return dst, nil
}

// AppendValue appends the msgpack of one message value in the canonical
// model (other integer widths and float32 are accepted too): map keys
// sorted, integers in their shortest form, floats as 64-bit floats. A
// value the model has no room for is an *rtm.Error with code
// invalid_format, and dst is returned unchanged.
func (Codec) AppendValue(dst []byte, v any) ([]byte, error) {
	out, err := appendValue(dst, v, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// AppendData appends an rtm/subscription/data PDU whose messages are
// already encoded. The client never sends one; it is here because
// codec.Codec has it.
func (Codec) AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	dst = appendMapHead(dst, 2)
	dst = appendStr(appendStr(dst, "action"), rtm.ActionSubscriptionData)
	dst = appendMapHead(appendStr(dst, "body"), 3)
	dst = appendStr(appendStr(dst, "subscription_id"), subscriptionID)
	dst = appendStr(appendStr(dst, "position"), pos.String())
	dst = appendArrayHead(appendStr(dst, "messages"), len(messages))
	for _, m := range messages {
		dst = append(dst, m...)
	}
	return dst
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
		return appendStr(dst, x), nil
	case []byte:
		return appendBin(dst, x), nil
	case rtm.RawValue:
		if len(x) == 0 {
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
	keys := SortedKeys(buf[:0], m)
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

// SortedKeys appends m's keys to buf in increasing order, the order every
// Sluice codec writes maps in. It is a Shell sort rather than the standard
// library's, whose generic pdqsort would add about 6 KB gzipped to
// sluice.wasm; message maps are small.
func SortedKeys(buf []string, m map[string]any) []string {
	for k := range m {
		buf = append(buf, k)
	}
	for gap := len(buf) / 2; gap > 0; gap /= 2 {
		for i := gap; i < len(buf); i++ {
			for j := i; j >= gap && buf[j-gap] > buf[j]; j -= gap {
				buf[j-gap], buf[j] = buf[j], buf[j-gap]
			}
		}
	}
	return buf
}

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
	dst, err := appendBody(dst, p.Body)
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
		enc, err := encMode.Marshal(body)
		if err != nil {
			return dst, fmt.Errorf("cbor: encode %T body: %w", body, err)
		}
		if len(enc) != 1 || enc[0] != cborNull {
			return append(dst, enc...), nil
		}
	}
	return append(dst, emptyBody...), nil // a nil pointer body
}

// appendPair writes a body of a string field and a message field.
func appendPair(dst []byte, k1, s, k2 string, msg any) ([]byte, error) {
	dst = appendHead(dst, majorMap, 2)
	dst = appendText(appendText(dst, k1), s)
	return appendValue(appendText(dst, k2), msg, 0)
}

func appendDataBody(dst []byte, b *rtm.SubscriptionData) ([]byte, error) {
	dst = appendDataHead(dst, b.SubscriptionID)
	dst = appendText(dst, "position")
	dst = appendText(dst, b.Position)
	dst = appendText(dst, "messages")
	dst = appendHead(dst, majorArray, uint64(len(b.Messages)))
	for _, m := range b.Messages {
		var err error
		if dst, err = appendValue(dst, m, 0); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendDataHead opens a subscription/data body, up to its id.
func appendDataHead(dst []byte, subscriptionID string) []byte {
	dst = appendHead(dst, majorMap, 3)
	return appendText(appendText(dst, "subscription_id"), subscriptionID)
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
	dst = appendDataHead(dst, subscriptionID)
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
	out, err := appendValue(dst, v, 0)
	if err != nil {
		return dst, err
	}
	return out, nil
}

func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, cborNull), nil
	case bool:
		if x {
			return append(dst, cborTrue), nil
		}
		return append(dst, cborFalse), nil
	case int64:
		return appendInt(dst, x), nil
	case uint64:
		return appendHead(dst, majorUint, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return dst, codec.NonFiniteError()
		}
		return binary.BigEndian.AppendUint64(append(dst, cborFloat64), math.Float64bits(x)), nil
	case string:
		if !utf8.ValidString(x) {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message string is not valid UTF-8")
		}
		return appendText(dst, x), nil
	case []byte:
		return append(appendHead(dst, majorBytes, uint64(len(x))), x...), nil
	case rtm.RawValue:
		if len(x) == 0 { // never a broken frame
			return append(dst, cborNull), nil
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

func appendInt(dst []byte, n int64) []byte {
	if n >= 0 {
		return appendHead(dst, majorUint, uint64(n))
	}
	return appendHead(dst, majorNeg, uint64(^n)) // -1 - n
}

func appendArray(dst []byte, a []any, depth int) ([]byte, error) {
	if depth >= codec.MaxDepth {
		return dst, codec.TooDeepError()
	}
	dst = appendHead(dst, majorArray, uint64(len(a)))
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
	dst = appendHead(dst, majorMap, uint64(len(keys)))
	for _, k := range keys {
		if !utf8.ValidString(k) {
			return dst, rtm.Errorf(rtm.CodeInvalidFormat, "message map key is not valid UTF-8")
		}
		var err error
		if dst, err = appendValue(appendText(dst, k), m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

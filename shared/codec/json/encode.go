package json

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendPDU appends p as a JSON object {"action","id"?,"body"}. The id is
// left out when p.ID is absent and a nil body is written as {}. Bodies that
// carry message values (PublishBody, ReadReply, SubscriptionData, maps) are
// written by hand like AppendValue; the others go through encoding/json. On
// error dst is returned unchanged.
func (Codec) AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error) {
	start := len(dst)
	dst = append(dst, `{"action":`...)
	dst = appendString(dst, p.Action)
	switch p.ID.Kind {
	case rtm.IDInt:
		dst = append(dst, `,"id":`...)
		dst = strconv.AppendInt(dst, p.ID.Int, 10)
	case rtm.IDString:
		dst = append(dst, `,"id":`...)
		dst = appendString(dst, p.ID.Str)
	}
	dst = append(dst, `,"body":`...)
	dst, err := appendBody(dst, p.Body)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '}'), nil
}

func appendBody(dst []byte, body any) ([]byte, error) {
	switch b := body.(type) {
	case nil, rtm.Empty, *rtm.Empty:
		return append(dst, "{}"...), nil
	case *rtm.PublishBody:
		if b != nil {
			return appendPublish(dst, b)
		}
	case rtm.PublishBody:
		return appendPublish(dst, &b)
	case *rtm.ReadReply:
		if b != nil {
			return appendReadReply(dst, b)
		}
	case rtm.ReadReply:
		return appendReadReply(dst, &b)
	case *rtm.SubscriptionData:
		if b != nil {
			return appendDataBody(dst, b)
		}
	case rtm.SubscriptionData:
		return appendDataBody(dst, &b)
	case map[string]any, map[any]any:
		return appendValue(dst, b, 0)
	default:
		j, err := json.Marshal(body)
		if err != nil {
			return dst, fmt.Errorf("json: encode %T body: %w", body, err)
		}
		if string(j) != "null" {
			return append(dst, j...), nil
		}
	}
	return append(dst, "{}"...), nil // a nil pointer body
}

func appendPublish(dst []byte, b *rtm.PublishBody) ([]byte, error) {
	dst = append(dst, `{"channel":`...)
	dst = appendString(dst, b.Channel)
	dst = append(dst, `,"message":`...)
	dst, err := appendValue(dst, b.Message, 0)
	return append(dst, '}'), err
}

func appendReadReply(dst []byte, b *rtm.ReadReply) ([]byte, error) {
	dst = append(dst, `{"position":`...)
	dst = appendString(dst, b.Position)
	dst = append(dst, `,"message":`...)
	dst, err := appendValue(dst, b.Message, 0)
	return append(dst, '}'), err
}

func appendDataBody(dst []byte, b *rtm.SubscriptionData) ([]byte, error) {
	dst = append(dst, `{"subscription_id":`...)
	dst = appendString(dst, b.SubscriptionID)
	dst = append(dst, `,"position":`...)
	dst = appendString(dst, b.Position)
	dst = append(dst, `,"messages":[`...)
	for i, m := range b.Messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, m, 0); err != nil {
			return dst, err
		}
	}
	return append(dst, "]}"...), nil
}

// AppendData appends an rtm/subscription/data PDU whose messages were
// encoded by AppendValue, splicing them in as they are. It is the fan-out's
// hot path: with room in dst it does not allocate.
func (Codec) AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte {
	dst = append(dst, `{"action":"rtm/subscription/data","body":{"subscription_id":`...)
	dst = appendString(dst, subscriptionID)
	dst = append(dst, `,"position":"`...)
	dst = pos.AppendText(dst)
	dst = append(dst, `","messages":[`...)
	for i, m := range messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m...)
	}
	return append(dst, "]}}"...)
}

// AppendValue appends the JSON of one message value in the canonical model.
// Other integer widths, float32 and maps keyed by any with string keys are
// accepted too, and an rtm.RawValue, already JSON, is copied as is (an
// empty one as null). Map keys are written in sorted order, []byte as a
// base64 string, and a float always with a fraction or an exponent, so 1.0
// decodes back as a float and not as the integer 1. NaN, infinities,
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
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, x), nil
	case int64:
		return strconv.AppendInt(dst, x, 10), nil
	case uint64:
		return strconv.AppendUint(dst, x, 10), nil
	case float64:
		return appendFloat(dst, x)
	case string:
		return appendString(dst, x), nil
	case []byte:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, x)
		return append(dst, '"'), nil
	case rtm.RawValue:
		if len(x) == 0 { // never a broken frame
			return append(dst, "null"...), nil
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
	dst = append(dst, '[')
	for i, e := range a {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = appendValue(dst, e, depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

func appendMap(dst []byte, m map[string]any, depth int) ([]byte, error) {
	if depth >= codec.MaxDepth {
		return dst, codec.TooDeepError()
	}
	var buf [16]string
	keys := codec.SortedKeys(buf[:0], m)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValue(dst, m[k], depth+1); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFloat writes a float as encoding/json does, plus ".0" when the
// result would read back as an integer.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, codec.NonFiniteError()
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// Shorten e-09 to e-9, as encoding/json does.
		if n := len(dst); n-start >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
		return dst, nil
	}
	for _, c := range dst[start:] {
		if c == '.' {
			return dst, nil
		}
	}
	return append(dst, ".0"...), nil
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Like encoding/json it escapes
// quotes, backslashes, control characters and U+2028/U+2029 (which break
// JavaScript), and replaces invalid UTF-8 with U+FFFD; unlike it, it leaves
// <, > and & alone, which JSON does not require.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if r == utf8.RuneError {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

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
	dst, err := codec.AppendBody(dst, p.Body, primitives{}, appendOther)
	if err != nil {
		return dst[:start], err
	}
	return append(dst, '}'), nil
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
		dst = append(separate(dst, i), m...)
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
	return codec.AppendValue(dst, v, primitives{})
}

// primitives is the codec.Primitives of JSON. Strings are never refused:
// invalid UTF-8 becomes U+FFFD, as in encoding/json.
type primitives struct{}

func (primitives) AppendNil(dst []byte) []byte            { return append(dst, "null"...) }
func (primitives) AppendBool(dst []byte, b bool) []byte   { return strconv.AppendBool(dst, b) }
func (primitives) AppendInt(dst []byte, n int64) []byte   { return strconv.AppendInt(dst, n, 10) }
func (primitives) AppendUint(dst []byte, n uint64) []byte { return strconv.AppendUint(dst, n, 10) }
func (primitives) AppendFloat(dst []byte, f float64) []byte {
	return appendFloat(dst, f)
}

func (primitives) AppendString(dst []byte, s string) ([]byte, error) {
	return appendString(dst, s), nil
}

// AppendBinary writes b as a base64 string.
func (primitives) AppendBinary(dst []byte, b []byte) ([]byte, error) {
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"'), nil
}

func (primitives) AppendText(dst []byte, s string) []byte    { return appendString(dst, s) }
func (primitives) AppendArrayStart(dst []byte, _ int) []byte { return append(dst, '[') }
func (primitives) AppendArrayItem(dst []byte, i int) []byte  { return separate(dst, i) }
func (primitives) AppendArrayEnd(dst []byte) []byte          { return append(dst, ']') }
func (primitives) AppendMapStart(dst []byte, _ int) []byte   { return append(dst, '{') }
func (primitives) AppendMapEnd(dst []byte) []byte            { return append(dst, '}') }
func (primitives) AppendMapKey(dst []byte, i int, k string) ([]byte, error) {
	return append(appendString(separate(dst, i), k), ':'), nil
}

// appendOther writes body with encoding/json, or nothing for null. The
// replies an edge sends most are written by hand instead, to the same
// bytes (replies.go).
func appendOther(dst []byte, body any) ([]byte, error) {
	if out, ok := appendReply(dst, body); ok {
		return out, nil
	}
	j, err := json.Marshal(body)
	if err != nil {
		return dst, fmt.Errorf("json: encode %T body: %w", body, err)
	}
	if string(j) == "null" {
		return dst, nil
	}
	return append(dst, j...), nil
}

// separate writes the comma before item or pair i.
func separate(dst []byte, i int) []byte {
	if i > 0 {
		return append(dst, ',')
	}
	return dst
}

// appendFloat writes a finite float as encoding/json does, plus ".0" when the
// result would read back as an integer.
func appendFloat(dst []byte, f float64) []byte {
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
		return dst
	}
	for _, c := range dst[start:] {
		if c == '.' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string. Like encoding/json it escapes
// quotes, backslashes, control characters and U+2028/U+2029 (which break
// JavaScript), and replaces invalid UTF-8 with U+FFFD; unlike it, it leaves
// <, > and & alone, which JSON does not require.
func appendString(dst []byte, s string) []byte { return appendQuoted(dst, s, false) }

// appendLibraryString writes s exactly as encoding/json's Marshal does:
// <, > and & escaped too, and \b and \f in their short forms. Bodies that
// were marshalled by the library before they were written by hand
// (replies.go) keep their bytes.
func appendLibraryString(dst []byte, s string) []byte { return appendQuoted(dst, s, true) }

func appendQuoted(dst []byte, s string, library bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && !(library && (c == '<' || c == '>' || c == '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case library && c == '\b':
				dst = append(dst, '\\', 'b')
			case library && c == '\f':
				dst = append(dst, '\\', 'f')
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

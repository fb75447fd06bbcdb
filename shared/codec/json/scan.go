package json

import (
	"bytes"
	"encoding/json"
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The scanner below walks the top level of a frame that json.Valid has
// accepted, so it can skip values without checking their syntax again; every
// index it reaches is inside the frame because a valid document closes every
// string, object and array it opens.

// PDU keys, as bits recording which were seen.
const (
	keyAction = 1 << iota
	keyID
	keyBody
)

func decodeEnvelope(f []byte) (rtm.Envelope, error) {
	var env rtm.Envelope
	i := skipSpace(f, 0)
	if f[i] != '{' {
		return env, rtm.Invalid(rtm.PDUNotMap)
	}
	i = skipSpace(f, i+1)
	seen := 0
	for f[i] != '}' {
		keyEnd := skipString(f, i)
		key := pduKeyLiteral(f[i:keyEnd])
		i = skipSpace(f, skipSpace(f, keyEnd)+1) // past the ':'
		end := skipValue(f, i)
		if key != 0 {
			if seen&key != 0 {
				return env, rtm.Invalid(rtm.PDUKeyTwice)
			}
			seen |= key
			if err := setField(&env, key, f[i:end]); err != nil {
				return env, err
			}
		}
		i = skipSpace(f, end)
		if f[i] == ',' {
			i = skipSpace(f, i+1)
		}
	}
	if seen&keyAction == 0 {
		return env, rtm.Invalid(rtm.PDUNoAction)
	}
	if seen&keyBody == 0 {
		env.Body = emptyBody
	}
	return env, nil
}

func setField(env *rtm.Envelope, key int, v []byte) error {
	switch key {
	case keyAction:
		if v[0] != '"' {
			return rtm.Invalid(rtm.PDUActionType)
		}
		s, err := unquote(v, true)
		env.Action = s
		return err
	case keyID:
		return decodeID(&env.ID, v)
	default:
		if v[0] != '{' {
			return rtm.Invalid(rtm.PDUBodyType)
		}
		env.Body = v
		return nil
	}
}

// decodeID keeps the id's JSON type: an integer literal is an integer id, a
// string a string id; anything else cannot be echoed faithfully.
func decodeID(id *rtm.ID, v []byte) error {
	if v[0] == '"' {
		s, err := unquote(v, false)
		*id = rtm.StringID(s)
		return err
	}
	n, ok := parseInt(v)
	if !ok {
		return rtm.Invalid(rtm.PDUIDType)
	}
	*id = rtm.IntID(n)
	return nil
}

// parseInt parses an integer literal that fits an int64; a fraction, an
// exponent or a larger magnitude is refused.
func parseInt(b []byte) (int64, bool) {
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	if len(b) == 0 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if u > (limit-d)/10 {
			return 0, false
		}
		u = u*10 + d
	}
	if neg {
		return int64(-u), true // -u wraps to MinInt64 when u == MaxInt64+1
	}
	return int64(u), true
}

// unquote returns the text of a JSON string literal. The common literal
// without escapes costs no allocation for known actions. Text that is not
// valid UTF-8 is refused rather than silently replaced.
func unquote(lit []byte, action bool) (string, error) {
	inner := lit[1 : len(lit)-1]
	if !utf8.Valid(inner) {
		return "", rtm.Invalid(rtm.PDUNotUTF8)
	}
	if bytes.IndexByte(inner, '\\') < 0 {
		if action {
			return codec.Action(inner), nil
		}
		return string(inner), nil
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", rtm.Invalid(rtm.PDUString)
	}
	return s, nil
}

// pduKeyLiteral names a key literal; keys written with escapes are
// unescaped first.
func pduKeyLiteral(lit []byte) int {
	name := lit[1 : len(lit)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		var s string
		if json.Unmarshal(lit, &s) != nil {
			return 0
		}
		name = []byte(s)
	}
	return pduKey(name)
}

func skipSpace(f []byte, i int) int {
	for i < len(f) && (f[i] == ' ' || f[i] == '\t' || f[i] == '\n' || f[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string literal at f[i].
func skipString(f []byte, i int) int {
	for i++; i < len(f); i++ {
		switch f[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the value at f[i].
func skipValue(f []byte, i int) int {
	switch f[i] {
	case '"':
		return skipString(f, i)
	case '{', '[':
		depth := 0
		for i < len(f) {
			switch f[i] {
			case '"':
				i = skipString(f, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(f) {
		switch f[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

package json

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendDelta implements codec.DeltaEncoder: delta as a JSON string of
// its bytes, which must be UTF-8 (a fossil delta of JSON text nearly
// always is: its commands are ASCII, its literals pieces of the message,
// unless one splits a character). appendString would replace a broken
// character with U+FFFD, and the client could not get the bytes back.
//
// It writes what appendString does, but passes over eight bytes at a
// time while none is to be escaped: a delta's commands and numbers never
// are, and the edge writes each delta of a feed to JSON once per message,
// when it makes it.
func (Codec) AppendDelta(dst, delta []byte) ([]byte, bool) {
	start := len(dst)
	dst = append(dst, '"')
	from := 0
	for i := 0; i < len(delta); {
		if i+8 <= len(delta) && plain8(binary.LittleEndian.Uint64(delta[i:])) {
			i += 8
			continue
		}
		c := delta[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = appendEscaped(append(dst, delta[from:i]...), c)
			i++
			from = i
			continue
		}
		r, size := utf8.DecodeRune(delta[i:])
		if r == utf8.RuneError && size == 1 {
			return dst[:start], false
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(append(dst, delta[from:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			from = i + size
		}
		i += size
	}
	dst = append(dst, delta[from:]...)
	return append(dst, '"'), true
}

// plain8 reports whether none of the eight bytes of x is to be escaped
// in a JSON string: none is a control character, '"', '\\' or past ASCII.
func plain8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	return (x&highs | (x-0x20*ones)&^x&highs | zero(x^'"'*ones) | zero(x^'\\'*ones)) == 0
}

// appendEscaped appends c, an ASCII byte that a JSON string cannot hold
// as it is, escaped as appendString escapes it.
func appendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// AppendDeltaData implements codec.DeltaEncoder.
func (Codec) AppendDeltaData(dst []byte, subscriptionID string, pos rtm.Position, deltas [][]byte) []byte {
	dst = append(dst, `{"action":"rtm/subscription/data","body":{"subscription_id":`...)
	dst = appendString(dst, subscriptionID)
	dst = append(dst, `,"position":"`...)
	dst = pos.AppendText(dst)
	dst = append(dst, `","messages":[`...)
	for i, m := range deltas {
		dst = append(separate(dst, i), m...)
	}
	return append(dst, `],"delta":true}}`...)
}

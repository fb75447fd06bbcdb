package json

import (
	"errors"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/sluicehq/sluice/shared/codec"
)

// parser reads JSON for the fast paths of DecodeBody (fast.go) in one pass,
// checking the syntax as it goes and building message values directly in
// the canonical model. It is deliberately unsure: whatever it does not
// read exactly as the library path would (an escaped key, a lone UTF-16
// surrogate, a key given twice, nesting past codec.MaxDepth, a number out
// of range, any syntax error) stops it with errLibrary, and the library
// path decodes the body from the start, errors and all. So it needs to be
// right only on the bodies it accepts, and the differential fuzz test
// (FuzzFastPath) checks exactly that.
type parser struct {
	b []byte
	i int
	arenas
}

// errLibrary sends a body to the library path.
var errLibrary = errors.New("json: body left to the library")

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// peek skips space and returns the next byte, or 0 at the end.
func (p *parser) peek() byte {
	p.space()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// expect skips space and consumes c.
func (p *parser) expect(c byte) error {
	if p.peek() != c {
		return errLibrary
	}
	p.i++
	return nil
}

// openObject consumes the '{' of an object, whose keys nextKey then
// reads. (A loop over nextKey rather than a callback per key: a closure
// passed down escapes, and would cost an allocation per object.)
func (p *parser) openObject() error { return p.expect('{') }

// nextKey reads the next key of an object, and the ':' after it: the raw
// key, which has no escapes and aliases the body, or ok false at the end
// of the object. n is the number of keys read before.
func (p *parser) nextKey(n int) (key []byte, ok bool, err error) {
	switch c := p.peek(); {
	case c == '}':
		p.i++
		return nil, false, nil
	case n > 0 && c != ',':
		return nil, false, errLibrary
	case n > 0:
		p.i++
	}
	if key, err = p.rawKey(); err != nil {
		return nil, false, err
	}
	return key, true, p.expect(':')
}

// rawKey reads a key literal without escapes and returns its bytes, which
// alias the body.
func (p *parser) rawKey() ([]byte, error) {
	if p.peek() != '"' {
		return nil, errLibrary
	}
	start := p.i + 1
	end, plain, err := p.scanString()
	if err != nil || !plain {
		return nil, errLibrary
	}
	return p.b[start:end], nil
}

// scanString moves past the string literal at p.i and returns the end of
// its text (before the closing quote) and whether the text has no
// escapes. A literal that is not valid JSON, or not UTF-8 (which the
// library would rewrite with U+FFFD), is errLibrary.
func (p *parser) scanString() (int, bool, error) {
	plain := true
	for i := p.i + 1; i < len(p.b); {
		c := p.b[i]
		switch {
		case c == '"':
			p.i = i + 1
			return i, plain, nil
		case c == '\\':
			plain = false
			n := escapeLen(p.b[i:])
			if n == 0 {
				return 0, false, errLibrary
			}
			i += n
		case c < 0x20:
			return 0, false, errLibrary
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(p.b[i:])
			if r == utf8.RuneError && size == 1 {
				return 0, false, errLibrary
			}
			i += size
		}
	}
	return 0, false, errLibrary
}

// escapeLen returns the length of the valid escape at the start of s, 0
// for one that is not.
func escapeLen(s []byte) int {
	if len(s) < 2 {
		return 0
	}
	switch s[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if _, ok := hex4(s[2:]); ok {
			return 6
		}
	}
	return 0
}

// unescape appends the text of the escaped literal text s (without its
// quotes), which scanString has checked, to dst. A lone UTF-16 surrogate,
// which the library turns into U+FFFD, is left to the library.
func unescape(dst, s []byte) ([]byte, error) {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		if i+1 >= len(s) {
			return dst, errLibrary
		}
		switch s[i+1] {
		case '"', '\\', '/':
			dst = append(dst, s[i+1])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[i+2:])
			if !ok {
				return dst, errLibrary
			}
			if utf16.IsSurrogate(r) {
				r2, ok := hex4(s[min(i+8, len(s)):])
				if !ok || s[i+6] != '\\' || s[i+7] != 'u' {
					return dst, errLibrary
				}
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return dst, errLibrary
				}
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 4
		default:
			return dst, errLibrary
		}
		i += 2
	}
	return dst, nil
}

// hex4 reads the four hex digits of a \u escape.
func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// literal consumes the literal word (true, false, null).
func (p *parser) literal(word string) error {
	if len(p.b)-p.i < len(word) || string(p.b[p.i:p.i+len(word)]) != word {
		return errLibrary
	}
	p.i += len(word)
	return nil
}

// number moves past the number literal at p.i and returns its text
// (aliasing the body) and whether it is an integer literal.
func (p *parser) number() ([]byte, bool, error) {
	start, i := p.i, p.i
	if i < len(p.b) && p.b[i] == '-' {
		i++
	}
	switch {
	case i < len(p.b) && p.b[i] == '0':
		i++
	case i < len(p.b) && '1' <= p.b[i] && p.b[i] <= '9':
		i = digits(p.b, i)
	default:
		return nil, false, errLibrary
	}
	integer := true
	if i < len(p.b) && p.b[i] == '.' {
		integer = false
		if i = digits(p.b, i+1); p.b[i-1] == '.' {
			return nil, false, errLibrary
		}
	}
	if i < len(p.b) && (p.b[i] == 'e' || p.b[i] == 'E') {
		integer = false
		i++
		if i < len(p.b) && (p.b[i] == '+' || p.b[i] == '-') {
			i++
		}
		at := i
		if i = digits(p.b, i); i == at {
			return nil, false, errLibrary
		}
	}
	p.i = i
	return p.b[start:i], integer, nil
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// integer reads an integer field (int64): an integer literal that fits,
// as the library takes.
func (p *parser) integer() (int64, error) {
	lit, isInt, err := p.number()
	if err != nil || !isInt {
		return 0, errLibrary
	}
	n, ok := parseInt(lit)
	if !ok {
		return 0, errLibrary
	}
	return n, nil
}

// value reads a message value at nesting depth (0 for the message itself)
// into the canonical model, as the library path and codec.Normalize give
// it.
func (p *parser) value(depth int) (any, error) {
	switch c := p.peek(); c {
	case '{':
		return p.mapValue(depth)
	case '[':
		return p.arrayValue(depth)
	case '"':
		s, err := p.arenaString()
		return p.box(s), err
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		return p.numberValue()
	}
}

func (p *parser) numberValue() (any, error) {
	lit, isInt, err := p.number()
	if err != nil {
		return nil, err
	}
	if isInt {
		if n, ok := parseInt(lit); ok {
			return n, nil
		}
		if lit[0] != '-' {
			if u, err := strconv.ParseUint(unsafe.String(&lit[0], len(lit)), 10, 64); err == nil {
				return u, nil
			}
		}
	}
	// The literal is only read: it does not outlive the call.
	f, err := strconv.ParseFloat(unsafe.String(&lit[0], len(lit)), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, errLibrary // the library's reason names the literal
	}
	return f, nil
}

func (p *parser) mapValue(depth int) (any, error) {
	if depth >= codec.MaxDepth {
		return nil, errLibrary
	}
	p.i++ // the '{'
	m := map[string]any{}
	for n := 0; ; n++ {
		key, ok, err := p.nextKey(n)
		if err != nil || !ok {
			return m, err
		}
		if _, dup := m[string(key)]; dup {
			return nil, errLibrary
		}
		k := p.arenaCopy(key)
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
}

func (p *parser) arrayValue(depth int) (any, error) {
	if depth >= codec.MaxDepth {
		return nil, errLibrary
	}
	p.i++ // the '['
	a := []any{}
	if p.peek() == ']' {
		p.i++
		return a, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		switch p.peek() {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, nil
		default:
			return nil, errLibrary
		}
	}
}

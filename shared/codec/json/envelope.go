package json

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// maxSkipDepth is how deeply the fast path of Decode follows nested
// values; a frame nested deeper goes to the library path, whose limit
// (encoding/json's) is larger.
const maxSkipDepth = 1000

// decodeEnvelopeFast is the fast path of Decode: one pass over the frame
// that checks the whole of it as utf8.Valid and json.Valid do and splits
// it as decodeEnvelope does. It reports false for any frame it is not sure
// of (an escaped or repeated PDU key, an escaped action or id, a frame
// that is not a valid PDU), which the library path then decodes, or
// refuses with its own code and reason.
func decodeEnvelopeFast(frame []byte) (rtm.Envelope, bool) {
	var env rtm.Envelope
	p := parser{b: frame}
	if p.openObject() != nil {
		return env, false
	}
	seen := 0
	for n := 0; ; n++ {
		key, ok, err := p.nextKey(n)
		if err != nil {
			return env, false
		}
		if !ok {
			break
		}
		k := pduKey(key)
		if seen&k != 0 {
			return env, false
		}
		seen |= k
		p.space()
		start := p.i
		if err := p.skip(0); err != nil {
			return env, false
		}
		if k != 0 && !setFieldFast(&env, k, frame[start:p.i]) {
			return env, false
		}
	}
	if p.space(); p.i != len(frame) || seen&keyAction == 0 {
		return env, false
	}
	if seen&keyBody == 0 {
		env.Body = emptyBody
	}
	return env, true
}

// pduKey names a raw PDU key, 0 for others.
func pduKey(key []byte) int {
	switch string(key) {
	case "action":
		return keyAction
	case "id":
		return keyID
	case "body":
		return keyBody
	}
	return 0
}

// setFieldFast sets the field of key from its value v, a valid JSON value,
// where that needs no unescaping.
func setFieldFast(env *rtm.Envelope, key int, v []byte) bool {
	switch key {
	case keyAction:
		inner, ok := plainString(v)
		env.Action = codec.Action(inner)
		return ok
	case keyID:
		if v[0] == '"' {
			inner, ok := plainString(v)
			env.ID = rtm.StringID(string(inner))
			return ok
		}
		n, ok := parseInt(v)
		env.ID = rtm.IntID(n)
		return ok
	}
	env.Body = v
	return v[0] == '{'
}

// plainString returns the text of a valid string literal without
// escapes.
func plainString(v []byte) ([]byte, bool) {
	if v[0] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	for _, c := range inner {
		if c == '\\' {
			return nil, false
		}
	}
	return inner, true
}

// skip moves past one value, checking it as json.Valid does.
func (p *parser) skip(depth int) error {
	switch c := p.peek(); c {
	case '{', '[':
		if depth >= maxSkipDepth {
			return errLibrary
		}
		p.i++
		return p.skipItems(c, depth)
	case '"':
		_, _, err := p.scanString()
		return err
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	}
	_, _, err := p.number()
	return err
}

// skipItems moves past the items of an object (open '{') or an array
// whose opening bracket was read.
func (p *parser) skipItems(open byte, depth int) error {
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	for n := 0; ; n++ {
		c := p.peek()
		if c == end {
			p.i++
			return nil
		}
		if n > 0 {
			if c != ',' {
				return errLibrary
			}
			p.i++
		}
		if open == '{' {
			if p.peek() != '"' {
				return errLibrary
			}
			if _, _, err := p.scanString(); err != nil {
				return err
			}
			if err := p.expect(':'); err != nil {
				return err
			}
		}
		if err := p.skip(depth + 1); err != nil {
			return err
		}
	}
}

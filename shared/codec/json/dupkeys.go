package json

import (
	"bytes"
	"encoding/json"
)

// A key given twice in one object is refused in a body, as it is in the
// PDU: encoding/json keeps the last value silently, so a proxy, a log or
// another parser that keeps the first would see a different request
// (say, another channel) than the edge. The check walks a body that has
// already decoded, so it skips values without checking their syntax.

// smallObject is the most keys an object may have before the check
// switches from comparing pairs to a set: pairs cost no allocation, and
// PDU bodies and most messages have a handful of keys.
const smallObject = 16

// hasDupKey reports whether some object in the JSON value b has a key
// twice. Keys are compared unescaped: "a" and "\u0061" are one key.
func hasDupKey(b []byte) bool {
	_, dup := walkValue(b, skipSpace(b, 0))
	return dup
}

// walkValue walks the value at b[i] and returns the index past it.
func walkValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch b[i] {
	case '{':
		return walkObject(b, i)
	case '[':
		i = skipSpace(b, i+1)
		for i < len(b) && b[i] != ']' {
			end, dup := walkValue(b, i)
			if dup {
				return end, true
			}
			i = skipSpace(b, end)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
			}
		}
		return i + 1, false
	}
	return skipValue(b, i), false
}

// walkObject walks the object at b[i]. Its first keys are kept as
// offsets in an array of its own frame, which holds no pointers and so
// stays on the stack; past smallObject keys a set takes over.
func walkObject(b []byte, i int) (int, bool) {
	var small [smallObject][2]int // key literals, as b[start:end]
	n := 0
	var set map[string]struct{}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		keyEnd := skipString(b, i)
		if keyEnd > len(b) {
			return keyEnd, false
		}
		lit := b[i:keyEnd]
		switch {
		case n < smallObject:
			for _, k := range small[:n] {
				if sameKey(b[k[0]:k[1]], lit) {
					return keyEnd, true
				}
			}
			small[n] = [2]int{i, keyEnd}
			n++
		default:
			if set == nil {
				set = make(map[string]struct{}, 2*smallObject)
				for _, k := range small {
					set[string(unescapeKey(b[k[0]:k[1]]))] = struct{}{}
				}
			}
			key := string(unescapeKey(lit))
			if _, ok := set[key]; ok {
				return keyEnd, true
			}
			set[key] = struct{}{}
		}
		i = skipSpace(b, skipSpace(b, keyEnd)+1) // past the ':'
		end, dup := walkValue(b, i)
		if dup {
			return end, true
		}
		i = skipSpace(b, end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return i + 1, false
}

// sameKey reports whether two key literals name one key.
func sameKey(a, b []byte) bool {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(unescapeKey(a), unescapeKey(b))
}

// unescapeKey returns a key literal's text: its bytes unless it has
// escapes, which are rare in keys and cost an allocation.
func unescapeKey(lit []byte) []byte {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return inner
	}
	return []byte(s)
}

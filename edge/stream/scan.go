package stream

import (
	"encoding/json"
	"unicode/utf8"
)

// A small scanner of the JSON PDUs the session writes to a subscribe or
// publish stream. Not encoding/json: its reflection runs deep, and the
// first reply is encoded on the session's reader goroutine (the reader
// makes the writer's pass itself), whose stack then stays grown for the
// stream's life: 3.5 KB more per idle subscriber than over a WebSocket
// (BenchmarkIdleSubscriberMemory). This one walks the bytes in a loop.

// skipValue returns the length of the JSON value at the start of b
// (after white space), or -1 if b does not start with a whole one. It
// checks the structure only as far as it needs to find the end.
func skipValue(b []byte) int {
	i := skipSpace(b, 0)
	depth := 0
	for i < len(b) {
		switch c := b[i]; c {
		case '"':
			n := skipString(b[i:])
			if n < 0 {
				return -1
			}
			i += n
		case '{', '[':
			depth++
			i++
		case '}', ']':
			if depth--; depth < 0 {
				return -1
			}
			i++
		case ',', ':', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
			i++
		default:
			i++
		}
		if depth == 0 && (i >= len(b) || isDelim(b[i])) {
			return i
		}
	}
	return -1
}

func isDelim(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ':' || c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// skipString returns the length of the JSON string at the start of b,
// quotes included, or -1.
func skipString(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// field returns the raw value of key in the JSON object obj, nil if it
// has none or obj is not an object.
func field(obj []byte, key string) []byte {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i++
	for {
		i = skipSpace(obj, i)
		if i >= len(obj) || obj[i] != '"' {
			return nil
		}
		n := skipString(obj[i:])
		if n < 0 {
			return nil
		}
		k := obj[i+1 : i+n-1]
		i = skipSpace(obj, i+n)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = skipSpace(obj, i+1)
		v := skipValue(obj[i:])
		if v < 0 {
			return nil
		}
		if string(k) == key {
			return obj[i : i+v]
		}
		i = skipSpace(obj, i+v)
		if i >= len(obj) || obj[i] != ',' {
			return nil
		}
		i++
	}
}

// elements calls f with each raw element of the JSON array arr.
func elements(arr []byte, f func(elem []byte)) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return
	}
	for i < len(arr) {
		n := skipValue(arr[i:])
		if n <= 0 {
			return
		}
		f(arr[i : i+n])
		i = skipSpace(arr, i+n)
		if i >= len(arr) || arr[i] != ',' {
			return
		}
		i = skipSpace(arr, i+1)
	}
}

// text returns the JSON string value v as Go text ("" if v is not a
// string). Escapes are rare in what it reads (actions, codes, positions,
// channel names), so they alone take encoding/json.
func text(v []byte) string {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return ""
	}
	s := v[1 : len(v)-1]
	for _, c := range s {
		if c == '\\' {
			var out string
			_ = json.Unmarshal(v, &out)
			return out
		}
	}
	return string(s)
}

// appendString appends s as a JSON string.
func appendString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
		case c < utf8.RuneSelf:
			dst = append(dst, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return append(dst, '"')
}

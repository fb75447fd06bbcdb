package loadgen

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/sluicehq/sluice/shared/rtm"
)

// What a raw subscriber (rawsub.go) reads of a JSON data PDU, without
// decoding its messages: encoding/json, even into json.RawMessage,
// validates every byte of them, and cost the generator more than the
// edge's whole delivery. The messages are checked byte for byte after
// (parseFeed), and a delta carries its checksum, so a malformed message
// is still caught; these only find where each value ends.

// errRawJSON is a data PDU body a raw subscriber cannot take apart.
var errRawJSON = errors.New("loadgen: malformed data PDU")

// dataPrefix starts a data PDU as the edge writes it: its body follows.
const dataPrefix = `{"action":"` + rtm.ActionSubscriptionData + `","body":`

// dataBody returns the body of frame when it is a data PDU as the edge
// writes it (its action first), without taking the rest apart.
func dataBody(frame []byte) ([]byte, bool) {
	if len(frame) > len(dataPrefix) && string(frame[:len(dataPrefix)]) == dataPrefix && frame[len(frame)-1] == '}' {
		return frame[len(dataPrefix) : len(frame)-1], true
	}
	return nil, false
}

// The rest of a data PDU body after its messages, as the edge writes it:
// the messages come last.
const (
	messagesKey = `"messages":[`
	deltaEnd    = `,"delta":true}`
	wholeEnd    = `}`
)

// dataMessages appends to ends where each message of body, a data PDU's
// body object, ends; the first starts at from, each next one a byte
// (the comma) after the end of the one before. delta is the body's
// delta flag. Where the edge put the messages last, they are found
// without stepping over the fields before them.
func dataMessages(body []byte, ends []int) (from int, _ []int, delta bool, err error) {
	if i := bytes.Index(body, []byte(messagesKey)); i > 0 {
		after, e, err := arrayValues(body, i+len(messagesKey)-1, ends)
		if err == nil && (string(body[after:]) == wholeEnd || string(body[after:]) == deltaEnd) {
			return i + len(messagesKey), e, string(body[after:]) == deltaEnd, nil
		}
	}
	arr, delta, err := walkData(body)
	if err != nil {
		return 0, ends, false, err
	}
	_, ends, err = arrayValues(body, arr, ends[:0])
	return arr + 1, ends, delta, err
}

// arrayValues appends to ends the end of each value of the array whose
// '[' is at b[i], and returns the index after its ']'.
func arrayValues(b []byte, i int, ends []int) (int, []int, error) {
	if i >= len(b) || b[i] != '[' {
		return 0, ends, errRawJSON
	}
	i++
	if i < len(b) && b[i] == ']' {
		return i + 1, ends, nil
	}
	for i < len(b) {
		end := skipJSON(b, i)
		if end == i || end >= len(b) {
			return 0, ends, errRawJSON
		}
		ends = append(ends, end)
		switch b[end] {
		case ']':
			return end + 1, ends, nil
		case ',':
			i = end + 1
		default:
			return 0, ends, errRawJSON
		}
	}
	return 0, ends, errRawJSON
}

// walkData returns where the messages array of body starts ('[') and
// the delta flag, key by key.
func walkData(body []byte) (arr int, delta bool, err error) {
	if len(body) < 2 || body[0] != '{' {
		return 0, false, errRawJSON
	}
	for i := 1; i < len(body) && body[i] != '}'; {
		k := skipJSON(body, i)
		if k >= len(body) || body[k] != ':' {
			return 0, false, errRawJSON
		}
		v := skipJSON(body, k+1)
		switch string(body[i:k]) {
		case `"messages"`:
			arr = k + 1
		case `"delta"`:
			delta = string(body[k+1:v]) == "true"
		}
		if v == k+1 {
			return 0, false, errRawJSON
		}
		if i = v; i < len(body) && body[i] == ',' {
			i++
		}
	}
	if arr == 0 {
		return 0, false, errRawJSON
	}
	return arr, delta, nil
}

// skipJSON returns the end of the compact JSON value at b[i:]: past a
// string, an object or an array, or at the ',', ':', ']' or '}' after a
// literal; len(b) at most.
func skipJSON(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return min(i+1, len(b))
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return min(i, len(b))
}

// jsonString returns the bytes of the JSON string v, unescaped into
// *buf if need be: a delta starts with its size and a newline, which
// JSON escapes. \uXXXX escapes are left to encoding/json.
func jsonString(buf *[]byte, v []byte) ([]byte, error) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return nil, errRawJSON
	}
	in := v[1 : len(v)-1]
	i := bytes.IndexByte(in, '\\')
	if i < 0 {
		return in, nil
	}
	out := append((*buf)[:0], in[:i]...)
	for ; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i == len(in) {
			return nil, errRawJSON
		}
		switch in[i] {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case '"', '\\', '/':
			out = append(out, in[i])
		default:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, err
			}
			return []byte(s), nil
		}
	}
	*buf = out
	return out, nil
}

package msgpack

import (
	"encoding/binary"
	"errors"
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// maxNesting leaves room above codec.MaxDepth for the PDU map, the body map
// and the messages array, so a message nested just too deep is reported by
// normalization with a precise reason.
const maxNesting = codec.MaxDepth + 8

// Why an item is not valid; they become the reason of an invalid_format.
var (
	errTruncated = errors.New("truncated")
	errReserved  = errors.New("reserved type byte 0xc1")
	errExt       = errors.New("extension types are not supported")
	errDeep      = errors.New("nested too deeply")
	errUTF8      = errors.New("string is not valid UTF-8")
	errExtra     = errors.New("extra data after the item")
)

// kind is the family of a msgpack item.
type kind uint8

const (
	kindNil kind = iota
	kindBool
	kindInt  // n holds the int64's bits
	kindUint // n holds the value
	kindFloat
	kindStr // n is the payload length, next its start
	kindBin
	kindExt // n is the payload length including the type byte
	kindArray
	kindMap
)

// head reads the type byte, and the length or value it announces, of the
// item at b[i]. The payload of strings, binary and extensions is not
// consumed; the value of numbers is.
func head(b []byte, i int) (k kind, n uint64, next int, err error) {
	if i >= len(b) {
		return 0, 0, 0, errTruncated
	}
	c := b[i]
	i++
	switch {
	case c <= 0x7f:
		return kindUint, uint64(c), i, nil
	case c >= 0xe0:
		return kindInt, uint64(int64(int8(c))), i, nil
	case c <= 0x8f:
		return kindMap, uint64(c & 0x0f), i, nil
	case c <= 0x9f:
		return kindArray, uint64(c & 0x0f), i, nil
	case c <= 0xbf:
		return kindStr, uint64(c & 0x1f), i, nil
	case c == 0xc0:
		return kindNil, 0, i, nil
	case c == 0xc1:
		return 0, 0, 0, errReserved
	case c == 0xc2 || c == 0xc3:
		return kindBool, uint64(c & 1), i, nil
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		return kindExt, 1 + 1<<(c-0xd4), i, nil
	}
	f := formats[c-0xc4]
	if len(b)-i < int(f.size) {
		return 0, 0, 0, errTruncated
	}
	n = readUint(b[i:], f.size)
	if f.kind == kindInt {
		n = signExtend(n, f.size)
	}
	if f.kind == kindExt {
		n++ // the type byte
	}
	return f.kind, n, i + int(f.size), nil
}

// formats describes the type bytes 0xc4 to 0xdf that carry a length or a
// value of a fixed size; fixext (0xd4-0xd8) is handled before.
var formats = [...]struct {
	kind kind
	size uint8
}{
	{kindBin, 1}, {kindBin, 2}, {kindBin, 4}, // c4-c6
	{kindExt, 1}, {kindExt, 2}, {kindExt, 4}, // c7-c9
	{kindFloat, 4}, {kindFloat, 8}, // ca-cb
	{kindUint, 1}, {kindUint, 2}, {kindUint, 4}, {kindUint, 8}, // cc-cf
	{kindInt, 1}, {kindInt, 2}, {kindInt, 4}, {kindInt, 8}, // d0-d3
	{}, {}, {}, {}, {}, // d4-d8, fixext
	{kindStr, 1}, {kindStr, 2}, {kindStr, 4}, // d9-db
	{kindArray, 2}, {kindArray, 4}, // dc-dd
	{kindMap, 2}, {kindMap, 4}, // de-df
}

func readUint(b []byte, size uint8) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func signExtend(n uint64, size uint8) uint64 {
	shift := 64 - 8*uint(size)
	return uint64(int64(n<<shift) >> shift)
}

// checker validates items; binary records whether it saw a binary value.
type checker struct{ binary bool }

// item validates the item at b[i], nested depth containers deep, and
// returns the index just past it.
func (c *checker) item(b []byte, i, depth int) (int, error) {
	k, n, i, err := head(b, i)
	if err != nil {
		return 0, err
	}
	switch k {
	case kindStr, kindBin, kindExt:
		if n > uint64(len(b)-i) {
			return 0, errTruncated
		}
		end := i + int(n)
		switch {
		case k == kindExt:
			return 0, errExt
		case k == kindBin:
			c.binary = true
		case !utf8.Valid(b[i:end]):
			return 0, errUTF8
		}
		return end, nil
	case kindArray, kindMap:
		if depth++; depth > maxNesting {
			return 0, errDeep
		}
		if k == kindMap {
			n *= 2 // n < 1<<32
		}
		for ; n > 0; n-- {
			if i, err = c.item(b, i, depth); err != nil {
				return 0, err
			}
		}
	}
	return i, nil
}

// decodeEnvelope validates a frame and reads its top-level map in one pass.
func decodeEnvelope(f []byte) (rtm.Envelope, error) {
	var env rtm.Envelope
	k, pairs, i, err := head(f, 0)
	if err != nil {
		return env, invalid("frame is not valid msgpack: " + err.Error())
	}
	if k != kindMap {
		return env, invalid("PDU must be a map")
	}
	var c checker
	var seen struct{ action, id, body bool }
	for ; pairs > 0; pairs-- {
		vs, err := c.item(f, i, 1)
		var end int
		if err == nil {
			end, err = c.item(f, vs, 1)
		}
		if err != nil {
			return rtm.Envelope{}, invalid("frame is not valid msgpack: " + err.Error())
		}
		kk, _, ks, _ := head(f, i)
		if kk != kindStr {
			return rtm.Envelope{}, invalid("PDU keys must be strings")
		}
		switch string(f[ks:vs]) {
		case "action":
			err = once(&seen.action)
			if err == nil {
				env.Action, err = str(f[vs:end], true)
			}
		case "id":
			err = once(&seen.id)
			if err == nil {
				err = decodeID(&env.ID, f[vs:end])
			}
		case "body":
			err = once(&seen.body)
			if bk, _, _, _ := head(f, vs); err == nil && bk != kindMap {
				err = invalid("PDU body must be a map")
			}
			env.Body = f[vs:end]
		}
		if err != nil {
			return rtm.Envelope{}, err
		}
		i = end
	}
	return finish(env, seen.action, seen.body, i, len(f))
}

func finish(env rtm.Envelope, action, body bool, end, size int) (rtm.Envelope, error) {
	switch {
	case end != size:
		return rtm.Envelope{}, invalid("frame is not valid msgpack: " + errExtra.Error())
	case !action:
		return rtm.Envelope{}, invalid("PDU has no action")
	case !body:
		env.Body = emptyBody
	}
	return env, nil
}

func once(seen *bool) error {
	if *seen {
		return invalid("PDU has a key twice")
	}
	*seen = true
	return nil
}

// str returns the string item v, already checked for UTF-8.
func str(v []byte, action bool) (string, error) {
	k, _, i, err := head(v, 0)
	if err != nil || k != kindStr {
		return "", invalid("PDU action must be a string")
	}
	if action {
		return codec.Action(v[i:]), nil
	}
	return string(v[i:]), nil
}

// decodeID keeps the id's type: an integer that fits an int64 or a string;
// anything else cannot be echoed faithfully.
func decodeID(id *rtm.ID, v []byte) error {
	k, n, _, err := head(v, 0)
	switch {
	case err == nil && k == kindInt:
		*id = rtm.IntID(int64(n))
	case err == nil && k == kindUint && n <= math.MaxInt64:
		*id = rtm.IntID(int64(n))
	case err == nil && k == kindStr:
		s, _ := str(v, false)
		*id = rtm.StringID(s)
	default:
		return invalid("PDU id must be an integer or a string")
	}
	return nil
}

package msgpack

import (
	"encoding/binary"
	"math"
	"unicode/utf8"
)

// kind is the family of a msgpack item.
type kind uint8

const (
	kindNil kind = iota
	kindBool
	kindInt  // n holds the int64's bits
	kindUint // n holds the value
	kindFloat32
	kindFloat64
	kindStr // n is the payload length
	kindBin
	kindExt
	kindArray
	kindMap
)

// formats describes the type bytes 0xc4 to 0xdf that carry a length or a
// value of a fixed size; fixext (0xd4-0xd8) is handled before.
var formats = [...]struct {
	kind kind
	size uint8
}{
	{kindBin, 1}, {kindBin, 2}, {kindBin, 4}, // c4-c6
	{kindExt, 1}, {kindExt, 2}, {kindExt, 4}, // c7-c9
	{kindFloat32, 4}, {kindFloat64, 8}, // ca-cb
	{kindUint, 1}, {kindUint, 2}, {kindUint, 4}, {kindUint, 8}, // cc-cf
	{kindInt, 1}, {kindInt, 2}, {kindInt, 4}, {kindInt, 8}, // d0-d3
	{}, {}, {}, {}, {}, // d4-d8, fixext
	{kindStr, 1}, {kindStr, 2}, {kindStr, 4}, // d9-db
	{kindArray, 2}, {kindArray, 4}, // dc-dd
	{kindMap, 2}, {kindMap, 4}, // de-df
}

// decoder reads msgpack items from b, starting at i.
type decoder struct {
	b []byte
	i int
}

// head reads the type byte, and the length or value it announces, of the
// next item. The payload of strings and binary is not consumed; the value
// of numbers is (a float's bits are in n).
func (d *decoder) head() (kind, uint64, error) {
	if d.i >= len(d.b) {
		return 0, 0, errTruncated
	}
	c := d.b[d.i]
	d.i++
	switch {
	case c <= 0x7f:
		return kindUint, uint64(c), nil
	case c >= 0xe0:
		return kindInt, uint64(int64(int8(c))), nil
	case c <= 0x8f:
		return kindMap, uint64(c & 0x0f), nil
	case c <= 0x9f:
		return kindArray, uint64(c & 0x0f), nil
	case c <= 0xbf:
		return kindStr, uint64(c & 0x1f), nil
	case c == 0xc0:
		return kindNil, 0, nil
	case c == 0xc1:
		return 0, 0, errReserved
	case c == 0xc2 || c == 0xc3:
		return kindBool, uint64(c & 1), nil
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		return kindExt, 0, errExt
	}
	f := formats[c-0xc4]
	if f.kind == kindExt {
		return kindExt, 0, errExt
	}
	if len(d.b)-d.i < int(f.size) {
		return 0, 0, errTruncated
	}
	n := readUint(d.b[d.i:], f.size)
	d.i += int(f.size)
	if f.kind == kindInt {
		shift := 64 - 8*uint(f.size)
		n = uint64(int64(n<<shift) >> shift)
	}
	return f.kind, n, nil
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

// payload consumes n bytes of a string or binary item.
func (d *decoder) payload(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.i) {
		return nil, errTruncated
	}
	p := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return p, nil
}

// key reads a map key, which must be a string.
func (d *decoder) key() (string, error) {
	k, n, err := d.head()
	if err != nil {
		return "", err
	}
	if k != kindStr {
		return "", errKey
	}
	p, err := d.payload(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(p) {
		return "", errUTF8
	}
	return string(p), nil
}

// skip checks and steps over one item, depth containers deep, without
// building its value.
func (d *decoder) skip(depth int) error {
	k, n, err := d.head()
	if err != nil {
		return err
	}
	switch k {
	case kindStr, kindBin:
		p, err := d.payload(n)
		if err == nil && k == kindStr && !utf8.Valid(p) {
			err = errUTF8
		}
		return err
	case kindArray, kindMap:
		if depth++; depth > maxNesting {
			return errDeep
		}
		if k == kindMap {
			n *= 2 // n < 1<<32
		}
		for ; n > 0; n-- {
			if err := d.skip(depth); err != nil {
				return err
			}
		}
	}
	return nil
}

// value decodes the next item into the canonical model: nil, bool, int64,
// uint64 (above math.MaxInt64 only), float64, string, []byte, []any or
// map[string]any. Binary is copied out of the frame.
func (d *decoder) value(depth int) (any, error) {
	k, n, err := d.head()
	if err != nil {
		return nil, err
	}
	switch k {
	case kindNil:
		return nil, nil
	case kindBool:
		return n == 1, nil
	case kindInt:
		return int64(n), nil
	case kindUint:
		if n <= math.MaxInt64 {
			return int64(n), nil
		}
		return n, nil
	case kindFloat32:
		return finite(float64(math.Float32frombits(uint32(n))))
	case kindFloat64:
		return finite(math.Float64frombits(n))
	case kindStr:
		p, err := d.payload(n)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(p) {
			return nil, errUTF8
		}
		return string(p), nil
	case kindBin:
		p, err := d.payload(n)
		return append([]byte{}, p...), err
	case kindArray:
		return d.array(n, depth+1)
	}
	return d.object(n, depth+1)
}

// finite refuses the floats the canonical model has no room for.
func finite(f float64) (any, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errFloat
	}
	return f, nil
}

// array decodes n items; each takes at least a byte, which bounds what a
// forged length can make it allocate.
func (d *decoder) array(n uint64, depth int) (any, error) {
	if depth > maxNesting {
		return nil, errDeep
	}
	if n > uint64(len(d.b)-d.i) {
		return nil, errTruncated
	}
	a := make([]any, n)
	for i := range a {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

// object decodes a map of n string keys; a key given twice keeps its last
// value, as the shared codec's library does.
func (d *decoder) object(n uint64, depth int) (any, error) {
	if depth > maxNesting {
		return nil, errDeep
	}
	if n > uint64(len(d.b)-d.i)/2 {
		return nil, errTruncated
	}
	m := make(map[string]any, n)
	for ; n > 0; n-- {
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, nil
}

package wire

import (
	"unicode/utf8"
)

// Kind is the family of a msgpack item, given by its type byte.
type Kind uint8

// The kinds of item, and what Head returns in n for each.
const (
	KindNil     Kind = iota
	KindBool         // n is 1 for true
	KindInt          // n holds the int64's bits
	KindUint         // n holds the value
	KindFloat32      // n holds the float32's bits
	KindFloat64      // n holds the float64's bits
	KindString       // n is the payload's length
	KindBinary       // n is the payload's length
	KindExt          // n is the payload's length counting the ext type byte
	KindArray        // n is the number of items
	KindMap          // n is the number of pairs
)

// Head reads the type byte of the item at b[i] and the length or value it
// announces, and returns them with the index just past them: the payload
// of strings, binary and extensions is not consumed, the value of numbers
// is. An item cut short is ErrTruncated and the type byte 0xc1
// ErrReserved. On error k is KindExt if the type byte was an extension's,
// so that a codec refusing extensions can say so first; otherwise it
// means nothing.
func Head(b []byte, i int) (k Kind, n uint64, next int, err error) {
	if i >= len(b) {
		return KindNil, 0, 0, ErrTruncated
	}
	c := b[i]
	i++
	switch {
	case c <= 0x7f:
		return KindUint, uint64(c), i, nil
	case c >= 0xe0:
		return KindInt, uint64(int64(int8(c))), i, nil
	case c <= 0x8f:
		return KindMap, uint64(c & 0x0f), i, nil
	case c <= 0x9f:
		return KindArray, uint64(c & 0x0f), i, nil
	case c <= 0xbf:
		return KindString, uint64(c & 0x1f), i, nil
	case c == 0xc0:
		return KindNil, 0, i, nil
	case c == 0xc1:
		return KindNil, 0, 0, ErrReserved
	case c == 0xc2 || c == 0xc3:
		return KindBool, uint64(c & 1), i, nil
	case c >= 0xd4 && c <= 0xd8: // fixext 1, 2, 4, 8, 16
		return KindExt, 1 + 1<<(c-0xd4), i, nil
	}
	f := formats[c-0xc4]
	if len(b)-i < int(f.size) {
		return f.kind, 0, 0, ErrTruncated
	}
	n = readUint(b[i:], f.size)
	switch f.kind {
	case KindInt:
		shift := 64 - 8*uint(f.size)
		n = uint64(int64(n<<shift) >> shift)
	case KindExt:
		n++ // the ext type byte
	}
	return f.kind, n, i + int(f.size), nil
}

// formats describes the type bytes 0xc4 to 0xdf that carry a length or a
// value of a fixed size; fixext (0xd4-0xd8) is handled before.
var formats = [...]struct {
	kind Kind
	size uint8
}{
	{KindBinary, 1}, {KindBinary, 2}, {KindBinary, 4}, // c4-c6
	{KindExt, 1}, {KindExt, 2}, {KindExt, 4}, // c7-c9
	{KindFloat32, 4}, {KindFloat64, 8}, // ca-cb
	{KindUint, 1}, {KindUint, 2}, {KindUint, 4}, {KindUint, 8}, // cc-cf
	{KindInt, 1}, {KindInt, 2}, {KindInt, 4}, {KindInt, 8}, // d0-d3
	{}, {}, {}, {}, {}, // d4-d8, fixext
	{KindString, 1}, {KindString, 2}, {KindString, 4}, // d9-db
	{KindArray, 2}, {KindArray, 4}, // dc-dd
	{KindMap, 2}, {KindMap, 4}, // de-df
}

func readUint(b []byte, size uint8) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(uint16At(b))
	case 4:
		return uint64(uint32At(b))
	}
	return uint64At(b)
}

// Scanner checks items without building their values, so that a forged
// length is caught before anything trusts it. The zero value is ready.
type Scanner struct {
	// Binary is set once the Scanner has stepped over a binary item: the
	// only kind whose bytes a library may turn into a string unchecked.
	Binary bool
}

// Skip checks the item at b[i], nested depth containers deep, and
// returns the index just past it. Every length must fit b, every string
// must be valid UTF-8 and containers may nest MaxNesting deep. An
// extension is ErrExt once its payload is known to fit.
func (s *Scanner) Skip(b []byte, i, depth int) (int, error) {
	k, n, i, err := Head(b, i)
	if err != nil {
		return 0, err
	}
	switch k {
	case KindString, KindBinary, KindExt:
		if n > uint64(len(b)-i) {
			return 0, ErrTruncated
		}
		end := i + int(n)
		switch {
		case k == KindExt:
			return 0, ErrExt
		case k == KindBinary:
			s.Binary = true
		case !utf8.Valid(b[i:end]):
			return 0, ErrUTF8
		}
		return end, nil
	case KindArray, KindMap:
		if depth++; depth > MaxNesting {
			return 0, ErrDeep
		}
		if k == KindMap {
			n *= 2 // n < 1<<32
		}
		for ; n > 0; n-- {
			if i, err = s.Skip(b, i, depth); err != nil {
				return 0, err
			}
		}
	}
	return i, nil
}

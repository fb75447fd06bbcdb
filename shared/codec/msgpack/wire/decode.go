package wire

import (
	"math"
	"unicode/utf8"
)

// Decoder reads msgpack items one after another from a byte slice and
// decodes them into the canonical value model of package codec: nil, bool,
// int64, uint64 (above math.MaxInt64 only), float64, string, []byte, []any
// and map[string]any. It is the decoder of the msgpack codec, on every
// build, and reads values as the msgpack library reads them into an any
// before normalization, so that a Go client using the library reads what
// the codec reads: a map key may be a string, binary (taken as a string)
// or nil (the empty string), and a key given twice keeps its last value.
//
// Every item is checked as Scanner checks it, and refused when Scanner
// refuses it (an extension cut short with ErrExt rather than
// ErrTruncated): lengths must fit the data (so a forged length cannot make
// it allocate), strings must be valid UTF-8, extensions are refused and
// containers nest at most MaxNesting deep. Beyond that, Key refuses only
// keys that are not strings, binary or nil (ErrKey). What the canonical
// model refuses is let through and noted (see NonCanonical and Deepest),
// for the caller to refuse or to leave to codec.Normalize.
//
// The zero value reads nothing; NewDecoder returns one reading b.
type Decoder struct {
	b       []byte
	i       int  // index of the next item in b
	odd     bool // see NonCanonical
	deepest int  // see Deepest
}

// NewDecoder returns a Decoder reading b from its start.
func NewDecoder(b []byte) Decoder { return Decoder{b: b} }

// Offset returns the index in b of the next item.
func (d *Decoder) Offset() int { return d.i }

// Remaining returns how many bytes of b are left to read.
func (d *Decoder) Remaining() int { return len(d.b) - d.i }

// End returns ErrExtra unless every byte of b has been read.
func (d *Decoder) End() error {
	if d.i != len(d.b) {
		return ErrExtra
	}
	return nil
}

// NonCanonical reports whether an item read so far was a NaN or an
// infinity, or binary read by Key that is not valid UTF-8: what the
// canonical model refuses and the Decoder let through.
//
// The Decoder lets them through, and leaves nesting deeper than
// codec.MaxDepth to Deepest, for its caller to leave them to
// codec.Normalize, which refuses only what remains in the messages of a
// body: a NaN in the first value of a key given twice is dropped with the
// value, and a body whose fields have the wrong types is refused as such
// even when a message before them holds a NaN.
func (d *Decoder) NonCanonical() bool { return d.odd }

// Deepest returns how deeply the containers decoded so far nest, counted
// as Value counts depth; 0 if there were none.
func (d *Decoder) Deepest() int { return d.deepest }

// Peek returns the kind of the next item from its type byte, without
// reading it: the length or value it announces is checked when the item
// is read. No byte left is ErrTruncated, the type byte 0xc1 ErrReserved
// and an extension ErrExt.
func (d *Decoder) Peek() (Kind, error) {
	if d.i >= len(d.b) {
		return KindNil, ErrTruncated
	}
	switch k := byteKinds[d.b[d.i]]; k {
	case KindExt:
		return k, ErrExt
	case kindReserved:
		return KindNil, ErrReserved
	default:
		return k, nil
	}
}

// kindReserved is the kind of the type byte 0xc1 in byteKinds.
const kindReserved = KindMap + 1

// byteKinds is the kind of each type byte, for Peek.
var byteKinds = func() (kinds [256]Kind) {
	for c := range kinds {
		k, _, _, err := Head([]byte{byte(c), 0, 0, 0, 0, 0, 0, 0, 0}, 0)
		if err != nil { // 0xc1 alone: the longest head, 9 bytes, fits
			k = kindReserved
		}
		kinds[c] = k
	}
	return kinds
}()

// Head reads the type byte of the next item and the length or value it
// announces, as the function Head does: the payload of strings and binary
// is not consumed, the value of numbers is. An extension is ErrExt from
// its type byte on.
func (d *Decoder) Head() (Kind, uint64, error) {
	k, n, next, err := Head(d.b, d.i)
	switch {
	case k == KindExt:
		return k, 0, ErrExt
	case err != nil:
		return k, 0, err
	}
	d.i = next
	return k, n, nil
}

// payload consumes the n bytes of a string, which must be valid UTF-8, or
// of binary, whose head was just read, and returns them; they alias b.
func (d *Decoder) payload(k Kind, n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.i) {
		return nil, ErrTruncated
	}
	p := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	if k == KindString && !utf8.Valid(p) {
		return nil, ErrUTF8
	}
	return p, nil
}

// Key reads a map key, or a string field of a body, as the library reads
// either into a Go string: a string, binary or nil (no bytes). It returns
// the bytes, which alias b, and the kind of the item. Any other kind is
// ErrKey.
func (d *Decoder) Key() ([]byte, Kind, error) {
	k, n, err := d.Head()
	switch {
	case err != nil || k == KindNil:
		return nil, k, err
	case k != KindString && k != KindBinary:
		return nil, k, ErrKey
	}
	p, err := d.payload(k, n)
	if k == KindBinary && !utf8.Valid(p) {
		d.odd = true
	}
	return p, k, err
}

// Skip checks the next item, nested depth containers deep, as
// Scanner.Skip does, and steps over it.
func (d *Decoder) Skip(depth int) error {
	var s Scanner
	next, err := s.Skip(d.b, d.i, depth)
	if err != nil {
		return err
	}
	d.i = next
	return nil
}

// Value decodes the next item, nested depth containers deep, into the
// canonical model. Strings and binary are copies, not aliases of b.
func (d *Decoder) Value(depth int) (any, error) {
	k, n, err := d.Head()
	if err != nil {
		return nil, err
	}
	switch k {
	case KindNil:
		return nil, nil
	case KindBool:
		return n == 1, nil
	case KindInt:
		return int64(n), nil
	case KindUint:
		if n <= math.MaxInt64 {
			return int64(n), nil
		}
		return n, nil
	case KindFloat32:
		return d.float(float64(math.Float32frombits(uint32(n)))), nil
	case KindFloat64:
		return d.float(math.Float64frombits(n)), nil
	case KindString:
		p, err := d.payload(k, n)
		return string(p), err
	case KindBinary:
		p, err := d.payload(k, n)
		return append([]byte{}, p...), err
	case KindArray:
		return d.Array(n, depth+1)
	}
	return d.object(n, depth+1)
}

// float notes a float the canonical model refuses.
func (d *Decoder) float(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		d.odd = true
	}
	return f
}

// nest checks the depth of a container, and notes it.
func (d *Decoder) nest(depth int) error {
	if depth > MaxNesting {
		return ErrDeep
	}
	d.deepest = max(d.deepest, depth)
	return nil
}

// Array decodes the n items of an array whose Head was just read, the
// array being depth containers deep counting itself. Each item takes at
// least a byte, which bounds what a forged n can make it allocate. An
// empty array is an empty slice, not nil.
func (d *Decoder) Array(n uint64, depth int) ([]any, error) {
	if err := d.nest(depth); err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.i) {
		return nil, ErrTruncated
	}
	a := make([]any, n)
	for i := range a {
		v, err := d.Value(depth)
		if err != nil {
			return nil, err
		}
		a[i] = v
	}
	return a, nil
}

// object decodes a map of n pairs, depth containers deep counting itself.
func (d *Decoder) object(n uint64, depth int) (any, error) {
	if err := d.nest(depth); err != nil {
		return nil, err
	}
	if n > uint64(len(d.b)-d.i)/2 {
		return nil, ErrTruncated
	}
	m := make(map[string]any, n)
	for ; n > 0; n-- {
		k, _, err := d.Key()
		if err != nil {
			return nil, err
		}
		v, err := d.Value(depth)
		if err != nil {
			return nil, err
		}
		m[string(k)] = v
	}
	return m, nil
}

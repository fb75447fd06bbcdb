package msgpack

import (
	"math"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// decoder reads msgpack items from b, starting at i.
type decoder struct {
	b []byte
	i int
}

// head reads the type byte, and the length or value it announces, of the
// next item. The payload of strings and binary is not consumed; the value
// of numbers is (a float's bits are in n). Extensions are refused from
// their type byte on.
func (d *decoder) head() (wire.Kind, uint64, error) {
	k, n, next, err := wire.Head(d.b, d.i)
	switch {
	case k == wire.KindExt:
		return k, 0, wire.ErrExt
	case err != nil:
		return k, 0, err
	}
	d.i = next
	return k, n, nil
}

// payload consumes n bytes of a string or binary item.
func (d *decoder) payload(n uint64) ([]byte, error) {
	if n > uint64(len(d.b)-d.i) {
		return nil, wire.ErrTruncated
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
	if k != wire.KindString {
		return "", errKey
	}
	p, err := d.payload(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(p) {
		return "", wire.ErrUTF8
	}
	return string(p), nil
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
	case wire.KindNil:
		return nil, nil
	case wire.KindBool:
		return n == 1, nil
	case wire.KindInt:
		return int64(n), nil
	case wire.KindUint:
		if n <= math.MaxInt64 {
			return int64(n), nil
		}
		return n, nil
	case wire.KindFloat32:
		return finite(float64(math.Float32frombits(uint32(n))))
	case wire.KindFloat64:
		return finite(math.Float64frombits(n))
	case wire.KindString:
		p, err := d.payload(n)
		if err != nil {
			return nil, err
		}
		if !utf8.Valid(p) {
			return nil, wire.ErrUTF8
		}
		return string(p), nil
	case wire.KindBinary:
		p, err := d.payload(n)
		return append([]byte{}, p...), err
	case wire.KindArray:
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
	if depth > wire.MaxNesting {
		return nil, wire.ErrDeep
	}
	if n > uint64(len(d.b)-d.i) {
		return nil, wire.ErrTruncated
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
	if depth > wire.MaxNesting {
		return nil, wire.ErrDeep
	}
	if n > uint64(len(d.b)-d.i)/2 {
		return nil, wire.ErrTruncated
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

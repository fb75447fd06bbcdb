// Package fossil makes and applies fossil deltas
// (https://fossil-scm.org/home/doc/tip/www/delta_format.wiki), the
// format of Sluice's delta extension: the edge makes them with Encoder,
// and the clients apply them with Apply. Apply is
// github.com/centrifugal/fdelta's Apply in one pass, for the browser
// client: the module's decoder, with its validation pass, error texts
// and encoder tables, costs sluice.wasm about 4 KB gzipped, Apply under
// one (and the client links no Encoder). The tests check both against
// the module on every input the fuzzer finds.
package fossil

import "errors"

// ErrDelta is a delta that is not well formed, that does not fit its
// base, whose output is larger than allowed, or whose checksum fails (it
// was made against other bytes).
var ErrDelta = errors.New("fossil: bad delta")

// Apply appends to dst the bytes delta makes of base, refusing a delta
// that would make more than limit bytes. On error dst is returned as it
// was.
func Apply(dst, base, delta []byte, limit int) ([]byte, error) {
	size, i := number(delta, 0)
	if i >= len(delta) || delta[i] != '\n' || size > uint64(limit) {
		return dst, ErrDelta
	}
	start, out := len(dst), dst
	if cap(out)-start < int(size) {
		out = make([]byte, start, start+int(size))
		copy(out, dst)
	}
	for i++; i < len(delta); {
		n, j := number(delta, i)
		if j >= len(delta) {
			break
		}
		i = j + 1
		switch delta[j] {
		case '@':
			off, k := number(delta, i)
			if k < len(delta) && delta[k] != ',' || off+n > uint64(len(base)) || uint64(len(out)-start)+n > size {
				return dst, ErrDelta
			}
			out = append(out, base[off:off+n]...)
			i = k + 1
		case ':':
			if uint64(i)+n > uint64(len(delta)) || uint64(len(out)-start)+n > size {
				return dst, ErrDelta
			}
			out = append(out, delta[i:i+int(n)]...)
			i += int(n)
		case ';':
			if uint64(len(out)-start) != size || uint64(checksum(out[start:])) != n {
				return dst, ErrDelta
			}
			return out, nil
		default:
			return dst, ErrDelta
		}
	}
	return dst, ErrDelta
}

// number reads the base-64 number at b[i:], as the format writes it
// (digits 0-9A-Z_a-z~, most significant first), and returns it with the
// index of the byte after it. Like the reference decoder it keeps 32
// bits of a longer one.
func number(b []byte, i int) (uint64, int) {
	var v uint32
	for ; i < len(b); i++ {
		c := b[i]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'A' && c <= 'Z':
			d = c - 'A' + 10
		case c == '_':
			d = 36
		case c >= 'a' && c <= 'z':
			d = c - 'a' + 37
		case c == '~':
			d = 63
		default:
			return uint64(v), i
		}
		v = v<<6 + uint32(d)
	}
	return uint64(v), i
}

// checksum is the format's: the sum of b's big-endian 32-bit words, the
// last one padded with zeros.
func checksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w uint32
		for j := 0; j < 4; j++ {
			w <<= 8
			if i+j < len(b) {
				w |= uint32(b[i+j])
			}
		}
		sum += w
	}
	return sum
}

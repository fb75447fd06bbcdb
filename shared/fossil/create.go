//go:build !js

// The browser client links Apply only: this file is left out of
// sluice.wasm, where the linker kept about 400 bytes of it unreferenced,
// and the budget has about 100 to spare.

package fossil

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
)

// Encoder makes fossil deltas for the edge, where a feed's delta is
// computed once per message and channel and must cost little beside the
// fan-out of the message: about 1 µs for 2 KB rather than the 4-5 µs of
// github.com/centrifugal/fdelta's AppendCreate, which hashes every
// 16-byte block of the base and rolls a hash over the target byte by
// byte wherever it has no copy yet.
//
// A message of a feed is mostly the previous one with a few fields
// changed: the runs they share sit at one displacement (base offset
// minus target offset) until a field changes length, and after the last
// change at the displacement of the ends. So Encoder tries those two
// first, eight bytes at a time; past a few bytes of literal it looks for
// the next eight bytes a few bytes either side of the last displacement
// (a number that gained or lost digits), and only past a longer literal
// does it look 8-byte keys up in a table of the base, which it builds
// the first time it needs it. A copy found late is made longer
// backwards, so that looking late costs time, not bytes. Its deltas are
// of the format that fossil's delta_apply, fdelta.Apply and Apply read;
// they are not the bytes fossil's own encoder writes (the format leaves
// the choice of copies to the encoder), and are about as small.
//
// The zero Encoder is ready. It keeps its table between calls, so that a
// pooled Encoder makes deltas without allocating; it is not safe for
// concurrent use. The browser client does not link it: it only applies.
type Encoder struct {
	table []int32 // 1 + the base offset of an 8-byte key, by hash; 0: none
	bits  int     // the table's size is 1<<bits when built
	base  []byte  // while a call runs
	built bool    // the table indexes base
}

// minTableBits is the smallest table built, of 64 slots.
const minTableBits = 6

// AppendCreate appends to dst the delta that makes target from base.
// Both must be shorter than 4 GiB, the format's limit (a larger one is a
// bug of the caller, who bounds the messages it diffs, and panics).
func (e *Encoder) AppendCreate(dst, base, target []byte) []byte {
	if uint64(len(base)) > math.MaxUint32 || uint64(len(target)) > math.MaxUint32 {
		panic("fossil: delta input over 4 GiB")
	}
	e.base, e.built = base, false
	dst = appendNumber(dst, uint(len(target)), '\n')
	dst, lit := e.appendCopies(dst, target)
	e.base = nil // a pooled Encoder keeps no message alive
	if lit < len(target) {
		dst = appendNumber(dst, uint(len(target)-lit), ':')
		dst = append(dst, target[lit:]...)
	}
	return appendNumber(dst, uint(checksum64(target)), ';')
}

// appendCopies appends the commands that make target from e.base up to
// its last copy, and returns where the literal after it starts.
func (e *Encoder) appendCopies(dst, target []byte) ([]byte, int) {
	base := e.base
	lit, t, shift := 0, 0, 0
	ends := len(base) - len(target)
	for t+8 <= len(target) {
		b, ok := e.candidate(target, t, shift, ends, t-lit >= scanAfter, t-lit >= tableAfter)
		if !ok {
			t++
			continue
		}
		// Back over the pending literal, then forward as far as it goes.
		k := commonSuffix(base[:b], target[lit:t])
		n := k + 8 + commonPrefix(base[b+8:], target[t+8:])
		from, at, litsz := b-k, t-k, t-k-lit
		cost := numberLen(uint(n)) + numberLen(uint(from)) + 2
		if litsz > 0 {
			cost += numberLen(uint(litsz)) + 1
		}
		if n <= cost {
			t++ // a copy this short would not pay for its command
			continue
		}
		if litsz > 0 {
			dst = appendNumber(dst, uint(litsz), ':')
			dst = append(dst, target[lit:at]...)
		}
		dst = appendNumber(dst, uint(n), '@')
		dst = appendNumber(dst, uint(from), ',')
		t, lit, shift = at+n, at+n, from-at
	}
	return dst, lit
}

// tableAfter is how long a literal grows before the table is looked at
// (and built, the first time): a changed field is usually shorter, and
// after it one of the displacements tried first matches again.
const tableAfter = 32

// scanAfter is how long a literal grows before candidate looks near the
// last copy's displacement: a field that changed and kept its length is
// past by then, and a copy found later is made longer backwards, so that
// waiting costs no byte of the delta.
const scanAfter = 8

// near is how far from the last copy's displacement candidate looks: a
// field that changed length by up to this many bytes.
const near = 8

// candidate returns where in the base the 8 bytes at target[t:] are, if
// they are: at the displacement of the last copy, at that of the ends,
// within near bytes of the first (a number that gained or lost digits),
// or, if table, where the table says.
func (e *Encoder) candidate(target []byte, t, shift, ends int, scan, table bool) (int, bool) {
	x := binary.LittleEndian.Uint64(target[t:])
	if b := t + shift; e.at(b, x) {
		return b, true
	}
	if b := t + ends; e.at(b, x) {
		return b, true
	}
	lo, hi := max(0, t+shift-near), min(len(e.base), t+shift+near+8)
	if lo+8 <= hi && scan {
		// bytes.Index, which looks for a short string with vector
		// instructions, rather than 2*near words compared.
		if i := bytes.Index(e.base[lo:hi], target[t:t+8]); i >= 0 {
			return lo + i, true
		}
	}
	if !table || len(e.base) < 8 {
		return 0, false
	}
	if !e.built {
		e.index()
	}
	b := int(e.table[hash(x, e.bits)]) - 1
	return b, e.at(b, x)
}

// at reports whether the 8 bytes of the base at b are x.
func (e *Encoder) at(b int, x uint64) bool {
	return b >= 0 && b+8 <= len(e.base) && binary.LittleEndian.Uint64(e.base[b:]) == x
}

// index fills the table with the base's 8-byte keys at every eighth
// offset: any run of 15 bytes or more that the target shares with the
// base holds one of them. Where keys collide the first stays, so that a
// copy is nearer the start, whose offset is shorter to write.
func (e *Encoder) index() {
	e.built = true
	n := len(e.base) / 8
	e.bits = max(minTableBits, bits.Len(uint(n))+1)
	if cap(e.table) < 1<<e.bits {
		e.table = make([]int32, 1<<e.bits)
	}
	e.table = e.table[:1<<e.bits]
	clear(e.table)
	for b := 0; b+8 <= len(e.base); b += 8 {
		h := hash(binary.LittleEndian.Uint64(e.base[b:]), e.bits)
		if e.table[h] == 0 {
			e.table[h] = int32(b + 1)
		}
	}
}

// hash maps an 8-byte key to a slot of a table of 1<<bits.
func hash(x uint64, bits int) uint64 {
	return (x * 0x9E3779B97F4A7C15) >> (64 - bits)
}

// commonPrefix is how many bytes a and b start with alike. After the
// first words, runs of 256 bytes are compared as strings, which the
// runtime does with vector instructions: several times faster than words
// in a loop, and a copy of a feed's message runs for hundreds of bytes.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n && i < 32; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i+256 <= n && string(a[i:i+256]) == string(b[i:i+256]); i += 256 {
	}
	for ; i+64 <= n && string(a[i:i+64]) == string(b[i:i+64]); i += 64 {
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for ; i < n && a[i] == b[i]; i++ {
	}
	return i
}

// commonSuffix is how many bytes a and b end with alike.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		x := binary.LittleEndian.Uint64(a[len(a)-i-8:]) ^ binary.LittleEndian.Uint64(b[len(b)-i-8:])
		if x != 0 {
			return i + bits.LeadingZeros64(x)/8
		}
	}
	for ; i < n && a[len(a)-i-1] == b[len(b)-i-1]; i++ {
	}
	return i
}

// appendNumber appends v, a length, an offset or a checksum (below
// 2^32), in the format's base 64, then the command c.
func appendNumber(dst []byte, v uint, c byte) []byte {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
	n := numberLen(v)
	dst = slices.Grow(dst, n+1)
	at := len(dst)
	dst = dst[:at+n+1]
	dst[at+n] = c
	for i := at + n - 1; i >= at; i-- {
		dst[i] = digits[v&63]
		v >>= 6
	}
	return dst
}

// numberLen is how many digits appendNumber writes for v.
func numberLen(v uint) int {
	return max(1, (bits.Len(v)+5)/6)
}

// checksum64 is checksum 32 bytes at a time: the sum of the big-endian
// 32-bit words, which is that of the two halves of each 64-bit one; the
// halves are summed apart, in 64 bits, so that no sum waits on another.
func checksum64(b []byte) uint32 {
	var hi, lo uint64
	i := 0
	for ; i+32 <= len(b); i += 32 {
		w := (*[32]byte)(b[i : i+32])
		x0, x1 := binary.BigEndian.Uint64(w[0:]), binary.BigEndian.Uint64(w[8:])
		x2, x3 := binary.BigEndian.Uint64(w[16:]), binary.BigEndian.Uint64(w[24:])
		hi += x0>>32 + x1>>32 + x2>>32 + x3>>32
		lo += x0&0xFFFFFFFF + x1&0xFFFFFFFF + x2&0xFFFFFFFF + x3&0xFFFFFFFF
	}
	return uint32(hi+lo) + checksum(b[i:])
}

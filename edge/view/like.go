package view

import (
	"bytes"
	"unicode/utf8"
)

// like is s LIKE pattern: % matches any run of characters, _ any one
// character, everything else itself, case-sensitively (there is no
// escape character). Null unless both are strings. It spends the
// evaluator's budget, and is false once that is spent.
func (e *Evaluator) like(s, pattern value) tri {
	if s.k != kString || pattern.k != kString {
		return tNull
	}
	return triOf(match(s.b, pattern.b, &e.left))
}

// match cuts the pattern at its %s into segments: the first must match
// at the start of s, the last at its end, and each one between at its
// leftmost place after the one before, which is always the best place
// for the rest. So a pattern costs no backtracking: a segment without _
// is found by bytes.Index, one with _ by a Shift-And search, both
// linear, or, longer than that search holds (only a pattern from a
// message), by trying each start, which costs at most len(s) times its
// length. A filter such as '%a%a%a%a%b' is thus linear, where a
// backtracking matcher would take len(s) * len(pattern) steps per
// message.
//
// match takes the work it does from *left (see Budget) and gives up,
// false, once *left is below 0.
func match(s, p []byte, left *int) bool {
	// The pattern's bytes pay for cutting it and for matching its first
	// and last segments.
	if *left -= len(p); *left < 0 {
		return false
	}
	first := bytes.IndexByte(p, '%')
	if first < 0 {
		n, read := matchAt(s, p)
		return read == len(p) && n == len(s)
	}
	n, read := matchAt(s, p[:first])
	if read != first {
		return false
	}
	s = s[n:]
	last := bytes.LastIndexByte(p, '%')
	tail := p[last+1:]
	start := len(s) // where the tail's characters begin
	for k := utf8.RuneCount(tail); k > 0; k-- {
		if start == 0 {
			return false
		}
		_, size := utf8.DecodeLastRune(s[:start])
		start -= size
	}
	if n, read := matchAt(s[start:], tail); read != len(tail) || n != len(s)-start {
		return false
	}
	return matchMiddle(s[:start], p[first+1:max(first+1, last)], left)
}

// matchMiddle finds the segments of mid, the pattern between its first
// and last %, one after the other in s, each at its leftmost place.
func matchMiddle(s, mid []byte, left *int) bool {
	for len(mid) > 0 {
		seg := mid
		if j := bytes.IndexByte(mid, '%'); j >= 0 {
			seg, mid = mid[:j], mid[j+1:]
		} else {
			mid = nil
		}
		if len(seg) == 0 {
			continue
		}
		at, n := find(s, seg, left)
		if at < 0 || *left < 0 {
			return false
		}
		s = s[at+n:]
	}
	return true
}

// matchAt matches a segment (no %) at the start of s: it returns how
// many bytes of s it took and of seg it read, all of seg when it
// matched.
func matchAt(s, seg []byte) (n, read int) {
	i := 0
	for j, c := range seg {
		switch {
		case c == '_':
			switch {
			case i >= len(s):
				return i, j
			case s[i] < utf8.RuneSelf:
				i++
			default:
				_, size := utf8.DecodeRune(s[i:])
				i += size
			}
		case i >= len(s) || s[i] != c:
			return i, j
		default:
			i++
		}
	}
	return i, len(seg)
}

// maxWild is the most characters a segment with _ may have in a LIKE
// pattern the statement gives: find's bit-parallel search holds one
// segment in a uint64.
const maxWild = 64

// wildSetup is the work units findWild costs before it reads s: the
// tables it clears.
const wildSetup = 64

// find returns the leftmost place of a segment in s and its length
// there, or -1. It takes the work from *left and gives up, -1, once
// *left is below 0.
func find(s, seg []byte, left *int) (at, n int) {
	switch {
	case bytes.IndexByte(seg, '_') < 0:
		at, n = bytes.Index(s, seg), len(seg)
	case utf8.RuneCount(seg) <= maxWild:
		at, n = findWild(s, seg)
		*left -= wildSetup
	default:
		return findEach(s, seg, left)
	}
	if at < 0 {
		*left -= len(s)
	} else {
		*left -= at + n
	}
	return at, n
}

// findEach is find by trying each start of s: a segment with _ too long
// for findWild, which only a message's string can give (Compile refuses
// one in a statement). It costs up to len(s) * len(seg) steps, which
// the budget bounds.
func findEach(s, seg []byte, left *int) (at, n int) {
	for at := 0; ; {
		n, read := matchAt(s[at:], seg)
		if read == len(seg) {
			return at, n
		}
		if *left -= read + 1; *left < 0 || at == len(s) {
			return -1, 0
		}
		_, size := utf8.DecodeRune(s[at:])
		at += size
	}
}

// findWild is find for a segment with _ of at most maxWild characters,
// by the Shift-And algorithm: bit j of d is set when the characters read
// so far end with the segment's first j+1, so the search reads each
// character of s once.
func findWild(s, seg []byte) (at, n int) {
	var ascii [128]uint64 // the bits of each ASCII character in seg
	var wild uint64       // the bits of its _s
	var others [maxWild]struct {
		r   rune
		bit uint64
	}
	nothers, m := 0, 0
	for j := 0; j < len(seg); m++ {
		r, size := utf8.DecodeRune(seg[j:])
		j += size
		bit := uint64(1) << m
		switch {
		case r == '_':
			wild |= bit
		case r < 128:
			ascii[r] |= bit
		default:
			others[nothers].r, others[nothers].bit = r, bit
			nothers++
		}
	}
	var starts [maxWild]int // where each of the last m characters began
	var d uint64
	accept := uint64(1) << (m - 1)
	for i, k := 0, 0; i < len(s); k++ {
		r, size := utf8.DecodeRune(s[i:])
		starts[k%maxWild] = i
		mask := wild
		if r < 128 {
			mask |= ascii[r]
		} else {
			for _, o := range others[:nothers] {
				if o.r == r {
					mask |= o.bit
				}
			}
		}
		d = (d<<1 | 1) & mask
		i += size
		if d&accept != 0 {
			start := starts[(k+1-m)%maxWild]
			return start, i - start
		}
	}
	return -1, 0
}

// checkPattern refuses a literal LIKE pattern with a segment (between
// %s) that has a _ and more than maxWild characters.
func checkPattern(p []byte) bool {
	for _, seg := range bytes.Split(p, []byte{'%'}) {
		if bytes.IndexByte(seg, '_') >= 0 && utf8.RuneCount(seg) > maxWild {
			return false
		}
	}
	return true
}

package view

import (
	"bytes"
	"unicode/utf8"
)

// like is s LIKE pattern: % matches any run of characters, _ any one
// character, everything else itself, case-sensitively (there is no
// escape character). Null unless both are strings.
func like(s, pattern value) tri {
	if s.k != kString || pattern.k != kString {
		return tNull
	}
	return triOf(match(s.b, pattern.b))
}

// match cuts the pattern at its %s into segments: the first must match
// at the start of s, the last at its end, and each one between at its
// leftmost place after the one before, which is always the best place
// for the rest. So a pattern costs no backtracking: a segment without _
// is found by bytes.Index, one with _ by trying each start, which costs
// at most len(s) times its length. A filter such as
// '%a%a%a%a%b' is thus linear, where a backtracking matcher would take
// len(s) * len(pattern) steps per message.
func match(s, p []byte) bool {
	first := bytes.IndexByte(p, '%')
	if first < 0 {
		n, ok := matchAt(s, p)
		return ok && n == len(s)
	}
	n, ok := matchAt(s, p[:first])
	if !ok {
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
	if n, ok := matchAt(s[start:], tail); !ok || n != len(s)-start {
		return false
	}
	s = s[:start]
	for mid := p[first+1 : max(first+1, last)]; len(mid) > 0; {
		seg := mid
		if j := bytes.IndexByte(mid, '%'); j >= 0 {
			seg, mid = mid[:j], mid[j+1:]
		} else {
			mid = nil
		}
		if len(seg) == 0 {
			continue
		}
		at, n := find(s, seg)
		if at < 0 {
			return false
		}
		s = s[at+n:]
	}
	return true
}

// matchAt matches a segment (no %) at the start of s and returns how
// many bytes of s it took.
func matchAt(s, seg []byte) (int, bool) {
	i := 0
	for _, c := range seg {
		switch {
		case c == '_':
			if i >= len(s) {
				return 0, false
			}
			_, size := utf8.DecodeRune(s[i:])
			i += size
		case i >= len(s) || s[i] != c:
			return 0, false
		default:
			i++
		}
	}
	return i, true
}

// maxWild is the most characters a segment with _ may have in a LIKE
// pattern the statement gives: find's bit-parallel search holds one
// segment in a uint64.
const maxWild = 64

// find returns the leftmost place of a segment in s and its length
// there, or -1.
func find(s, seg []byte) (at, n int) {
	switch {
	case bytes.IndexByte(seg, '_') < 0:
		return bytes.Index(s, seg), len(seg)
	case utf8.RuneCount(seg) <= maxWild:
		return findWild(s, seg)
	}
	// A longer segment can only come from a message's string (Compile
	// refuses one in a statement): try each start.
	for at := 0; ; {
		if n, ok := matchAt(s[at:], seg); ok {
			return at, n
		}
		if at == len(s) {
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

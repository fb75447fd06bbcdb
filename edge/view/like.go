package view

import "unicode/utf8"

// like is s LIKE pattern: % matches any run of characters, _ any one
// character, everything else itself, case-sensitively (there is no
// escape character). Null unless both are strings.
func like(s, pattern value) tri {
	if s.k != kString || pattern.k != kString {
		return tNull
	}
	return triOf(match(s.b, pattern.b))
}

// match runs the pattern over s without recursion: on a mismatch it goes
// back to the last % and lets it take one more character, which costs at
// most len(s) * len(pattern) steps and no allocation.
func match(s, p []byte) bool {
	si, pi := 0, 0
	star, resume := -1, 0 // the last % in p, and where in s it next resumes
	for si < len(s) {
		switch {
		case pi < len(p) && p[pi] == '%':
			star, resume = pi, si
			pi++
			continue
		case pi < len(p) && p[pi] == '_':
			_, size := utf8.DecodeRune(s[si:])
			si += size
			pi++
			continue
		case pi < len(p) && p[pi] == s[si]:
			si++
			pi++
			continue
		case star >= 0:
			_, size := utf8.DecodeRune(s[resume:])
			resume += size
			si, pi = resume, star+1
			continue
		}
		return false
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	return pi == len(p)
}

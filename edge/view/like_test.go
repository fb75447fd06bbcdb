package view_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluicehq/sluice/edge/view"
)

// TestLikeExhaustive compares LIKE with the reference (a regular
// expression) on every pattern of up to four symbols of a, b, % and _
// against every string of up to four characters of a, b and é.
func TestLikeExhaustive(t *testing.T) {
	t.Parallel()
	var patterns, texts []string
	var grow func(acc []string, alphabet []string, s string, n int) []string
	grow = func(acc []string, alphabet []string, s string, n int) []string {
		acc = append(acc, s)
		if n == 0 {
			return acc
		}
		for _, c := range alphabet {
			acc = grow(acc, alphabet, s+c, n-1)
		}
		return acc
	}
	patterns = grow(nil, []string{"a", "b", "%", "_"}, "", 4)
	texts = grow(nil, []string{"a", "b", "\u00e9"}, "", 4)
	msgs := make([][]byte, len(texts))
	for i, s := range texts {
		msgs[i] = enc(t, M{"s": s})
	}
	for _, p := range patterns {
		v := compile(t, "SELECT * FROM ch WHERE s LIKE '"+p+"'")
		for i, s := range texts {
			want := refLike(s, p) == true
			if dpLike(s, p) != want {
				t.Fatalf("the references disagree on %q LIKE %q", s, p)
			}
			if got := v.Match(msgs[i]); got != want {
				t.Fatalf("%q LIKE %q: %v, want %v", s, p, got, want)
			}
		}
	}
}

// BenchmarkLikeWorst is a pattern that makes a backtracking matcher take
// len(s) * len(pattern) steps, on a 64 KiB string that never matches.
func BenchmarkLikeWorst(b *testing.B) {
	v := compile(b, "SELECT * FROM ch WHERE s LIKE '%"+strings.Repeat("a%", 200)+"b%' OR s LIKE '%"+strings.Repeat("a_", 31)+"b%'")
	m := enc(b, M{"s": strings.Repeat("a", 64<<10)})
	b.ReportAllocs()
	for b.Loop() {
		if v.Match(m) {
			b.Fatal("matched")
		}
	}
}

// FuzzLike compares LIKE with the reference on any string and pattern.
func FuzzLike(f *testing.F) {
	for _, seed := range [][2]string{{"abcab", "%a_c%b"}, {"\u00e9t\u00e9", "_t%"}, {"aaaa", "%a_a%"}, {"", "%"}, {"ab", "a%%b"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, s, p string) {
		if !utf8.ValidString(s) || !utf8.ValidString(p) || len(p) > 200 {
			return // messages and statements are UTF-8
		}
		v, err := view.Compile("SELECT * FROM ch WHERE s LIKE p")
		if err != nil {
			t.Fatal(err)
		}
		want := refLike(s, p) == true
		if got := v.Match(enc(t, M{"s": s, "p": p})); got != want {
			t.Fatalf("%q LIKE %q: %v, want %v", s, p, got, want)
		}
	})
}

// dpLike is the reference LIKE as dynamic programming over characters:
// after the pattern's first i characters, at[j] says whether they match
// the string's first j. Slow (len(s) * len(p)) and obviously right.
func dpLike(s, p string) bool {
	sr := []rune(s)
	at := make([]bool, len(sr)+1)
	at[0] = true
	for _, c := range p {
		next := make([]bool, len(sr)+1)
		next[0] = c == '%' && at[0]
		for j := 1; j <= len(sr); j++ {
			switch c {
			case '%':
				next[j] = at[j] || next[j-1]
			case '_':
				next[j] = at[j-1]
			default:
				next[j] = at[j-1] && sr[j-1] == c
			}
		}
		at = next
	}
	return at[len(sr)]
}

// FuzzLikeLong compares LIKE, its pattern taken from the message, with
// dpLike, on patterns that reach every way of matching a segment: when
// wide is not 0, the first _ of p becomes a run of 65 to 128, longer
// than the bit-parallel search holds, and s is repeated to be long
// enough to match it. None of these costs near the Budget.
func FuzzLikeLong(f *testing.F) {
	seeds := []struct {
		s, p string
		wide uint8
	}{
		{"abcab", "%a_c%b", 0}, {"aaaa", "%a_a%", 1}, {"ab\u00e9", "a_%", 3},
		{"xyz", "%_%", 64}, {"abab", "%b_a%b", 9}, {"a", "%_", 0}, {"ab", "_b", 200},
	}
	for _, seed := range seeds {
		f.Add(seed.s, seed.p, seed.wide)
	}
	f.Fuzz(func(t *testing.T, s, p string, wide uint8) {
		if !utf8.ValidString(s) || !utf8.ValidString(p) || len(s) > 1000 || len(p) > 200 {
			return // messages and statements are UTF-8
		}
		if i := strings.IndexByte(p, '_'); wide > 0 && i >= 0 {
			p = p[:i] + strings.Repeat("_", 65+int(wide)%64) + p[i+1:]
			s = strings.Repeat(s, 1+200/(len(s)+1))
		}
		e := compile(t, "SELECT * FROM ch WHERE s LIKE p").NewEvaluator()
		want := dpLike(s, p)
		if got := e.Match(enc(t, M{"s": s, "p": p})); got != want || e.Err() != nil {
			t.Fatalf("%q LIKE %q: %v (err %v), want %v", s, p, got, e.Err(), want)
		}
	})
}

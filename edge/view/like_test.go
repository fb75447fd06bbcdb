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

package view_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/view"
)

// worstLike are LIKE patterns a message can carry against its own 30 KB
// string s of 'a's (s and the pattern together are a 60 KB message, near
// the edge's 64 KiB limit), the worst found for each way a pattern is
// matched: a segment with _ too long for the bit-parallel search, many
// literal segments, many segments with _.
var worstLike = []struct {
	name, pattern string
}{
	{"long_wild", "%" + strings.Repeat("_", 29_000) + "b%"},
	{"a%a%b", "%" + strings.Repeat("a%", 14_500) + "b%"},
	{"_%_%b", strings.Repeat("_%", 14_500) + "b%"},
	{"a_a_b", "%" + strings.Repeat("a_", 14_500) + "b%"},
}

// BenchmarkLikeFromMessage is s LIKE p with p the message's own field,
// for each of worstLike: one term, one message.
func BenchmarkLikeFromMessage(b *testing.B) {
	for _, w := range worstLike {
		b.Run(w.name, func(b *testing.B) {
			v := compile(b, "SELECT * FROM ch WHERE s LIKE p")
			m := enc(b, M{"s": strings.Repeat("a", 30_000), "p": w.pattern})
			benchNoMatch(b, v, m)
		})
	}
}

// BenchmarkLikeTerms is a filter of n terms s LIKE p (1,300 fill the
// 16 KiB a statement may have), each matched against the worst message
// of worstLike.
func BenchmarkLikeTerms(b *testing.B) {
	for _, n := range []int{20, 1300} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			v := compile(b, "SELECT * FROM ch WHERE s LIKE p"+strings.Repeat(" OR s LIKE p", n-1))
			m := enc(b, M{"s": strings.Repeat("a", 30_000), "p": worstLike[0].pattern})
			benchNoMatch(b, v, m)
		})
	}
}

// benchNoMatch measures v matching m, which it must not match, with the
// CPU time it takes (reportCPU).
func benchNoMatch(b *testing.B, v *view.View, m []byte) {
	b.ReportAllocs()
	start := cpuTime(b)
	defer reportCPU(b, start)
	for b.Loop() {
		if v.Match(m) {
			b.Fatal("matched")
		}
	}
}

package journal

import (
	"strings"
	"testing"
)

// FuzzSubject checks that every store key survives the trip through its
// subject, that a subject is one token after the app's (no '.', '*', '>'
// or space can split or widen it), and that keyOf refuses what no key
// became, without panicking.
func FuzzSubject(f *testing.F) {
	for _, s := range []string{"demo\x00chat", "a\x00b.c", "app\x00*", "app\x00>", "x\x00 $sys.stats", "\x00", "k\x00\xff\xfe", "sluice.YR.Yg", "sluice.YQ.Yg"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if k, ok := keyOf(key); ok && Subject(k) != key {
			// Only canonical subjects decode: a key has exactly one.
			t.Fatalf("keyOf(%q) = %q, whose subject is %q", key, k, Subject(k))
		}
		app, channel, ok := strings.Cut(key, "\x00")
		if !ok || app == "" || channel == "" {
			return
		}
		subj := Subject(key)
		if strings.ContainsAny(subj, "*> \t\r\n") || strings.Count(subj, ".") != 2 {
			t.Fatalf("Subject(%q) = %q is not sluice.<app>.<channel>", key, subj)
		}
		if got, ok := keyOf(subj); !ok || got != key {
			t.Fatalf("keyOf(Subject(%q)) = %q, %v", key, got, ok)
		}
	})
}

package journal

import (
	"strings"
	"testing"
)

// unpartitioned is a journal's subjects in a log of one partition.
var unpartitioned = &Journal{prefix: subjectPrefix, fence: fenceSubject(subjectPrefix)}

// FuzzSubject checks that every store key survives the trip through its
// subject, that a subject is one token after the app's (no '.', '*', '>'
// or space can split or widen it), and that keyOf refuses what no key
// became, without panicking.
func FuzzSubject(f *testing.F) {
	for _, s := range []string{"demo\x00chat", "a\x00b.c", "app\x00*", "app\x00>", "x\x00 $sys.stats", "\x00", "k\x00\xff\xfe", "sluice.YR.Yg", "sluice.YQ.Yg"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if k, ok := unpartitioned.keyOf(key); ok && Subject(k) != key {
			// Only canonical subjects decode: a key has exactly one.
			t.Fatalf("unpartitioned.keyOf(%q) = %q, whose subject is %q", key, k, Subject(k))
		}
		app, channel, ok := strings.Cut(key, "\x00")
		if !ok || app == "" || channel == "" {
			return
		}
		subj := Subject(key)
		if strings.ContainsAny(subj, "*> \t\r\n") || strings.Count(subj, ".") != 2 {
			t.Fatalf("Subject(%q) = %q is not sluice.<app>.<channel>", key, subj)
		}
		if got, ok := unpartitioned.keyOf(subj); !ok || got != key {
			t.Fatalf("unpartitioned.keyOf(Subject(%q)) = %q, %v", key, got, ok)
		}
		// A partition's subjects are its own: no other stream's keyOf
		// takes them, nor it theirs.
		p2 := &Journal{prefix: partitionPrefix(4, "SLUICE-2")}
		p3 := &Journal{prefix: partitionPrefix(4, "SLUICE-3")}
		ps := p2.subject(key)
		if got, ok := p2.keyOf(ps); !ok || got != key {
			t.Fatalf("partition 2's keyOf(%q) = %q, %v; want %q", ps, got, ok, key)
		}
		for _, other := range []*Journal{unpartitioned, p3} {
			if got, ok := other.keyOf(ps); ok {
				t.Fatalf("prefix %q took partition 2's subject %q as %q", other.prefix, ps, got)
			}
		}
		if got, ok := p2.keyOf(subj); ok {
			t.Fatalf("partition 2 took the unpartitioned subject %q as %q", subj, got)
		}
	})
}

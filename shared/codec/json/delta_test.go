package json_test

import (
	stdjson "encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/codec/json"
)

// FuzzAppendDelta: a delta that is UTF-8 is written as a JSON string
// that encoding/json reads back as its bytes, with nothing that a
// browser's JSON.parse would read otherwise (U+2028 and U+2029 escaped),
// and one that is not is refused with dst unchanged.
func FuzzAppendDelta(f *testing.F) {
	for _, s := range []string{
		"", "Ut\nW@0,2:2536@Y,2:54B@3f,4:1005A@4J,31wZjF;",
		"12\n9:{\"a\":\"b\\\\c\"}3@0,2Y;", "\x00\x1f\x7f\t\r\n", "é日本\u2028\u2029x", "abcdefgh\xc3", "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, delta []byte) {
		got, ok := json.Codec{}.AppendDelta([]byte("x"), delta)
		if !utf8.Valid(delta) {
			if ok || string(got) != "x" {
				t.Fatalf("%q, not UTF-8: %q, %v", delta, got, ok)
			}
			return
		}
		var back string
		if err := stdjson.Unmarshal(got[1:], &back); !ok || err != nil || back != string(delta) {
			t.Fatalf("%q: wrote %q (%v), read back %q, %v", delta, got, ok, back, err)
		}
		for _, r := range string(got) {
			if r < 0x20 || r == '\u2028' || r == '\u2029' {
				t.Fatalf("%q: wrote %q, with %U unescaped", delta, got, r)
			}
		}
	})
}

// TestAppendDeltaAllocs: a delta is written into the caller's buffer.
func TestAppendDeltaAllocs(t *testing.T) {
	delta := []byte("Ut\nW@0,2:2536@Y,2:54B@3f,4:1005A@4J,1:\"5QP@4U,31wZjF;")
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() { dst, _ = json.Codec{}.AppendDelta(dst[:0], delta) }); n != 0 {
		t.Errorf("%v allocations a delta", n)
	}
}

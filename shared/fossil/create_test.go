//go:build !js

package fossil_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/centrifugal/fdelta"

	"github.com/sluicehq/sluice/shared/fossil"
)

// check fails t unless delta makes target of base, for Apply and for
// the module's decoder (the reference's port), which also checks the
// form of every command.
func check(t testing.TB, base, target, delta []byte) {
	t.Helper()
	if got, err := fossil.Apply(nil, base, delta, len(target)); err != nil || !bytes.Equal(got, target) {
		t.Fatalf("Apply of the delta %q of %q from %q = %q, %v", delta, target, base, got, err)
	}
	if got, err := fdelta.Apply(base, delta); err != nil || !bytes.Equal(got, target) {
		t.Fatalf("fdelta.Apply of the delta %q of %q from %q = %q, %v", delta, target, base, got, err)
	}
}

// feed is the i-th message of a feed of JSON objects of about 2 KB of
// which a few fields change: a time stamp, and one level's numbers,
// which are as long as before or up to three digits longer or shorter.
func feed(i int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"symbol":"SLC1","ts":%d,"levels":[`, int64(1700000000000)+int64(i)*250)
	x := uint32(2654435762)
	for l := 0; b.Len() < 1960; l++ {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		size, orders := x%5000, x%17
		if l == i%8 {
			size, orders = 1000+uint32(i), uint32(i%17)
		}
		if l > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"price":%d.%02d,"size":%d,"orders":%d}`, 100+x%50, x%100, size, orders)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// TestCreate makes deltas of pairs that exercise each way of finding a
// copy (the same displacement, that of the ends, the table) and none,
// with one Encoder, so that each call also runs on the table of others.
func TestCreate(t *testing.T) {
	t.Parallel()
	long := bytes.Repeat([]byte("0123456789abcdef"), 300)
	moved := append(append([]byte{}, long[2400:]...), long[:2400]...)
	for _, tt := range []struct{ name, base, target string }{
		{name: "empty", base: "", target: ""},
		{name: "from nothing", base: "", target: "abc"},
		{name: "to nothing", base: "abc", target: ""},
		{name: "short", base: "abcdefg", target: "abcdefh"},
		{name: "same", base: string(feed(1)), target: string(feed(1))},
		{name: "feed", base: string(feed(1)), target: string(feed(2))},
		{name: "feed back", base: string(feed(9)), target: string(feed(1))},
		{name: "longer field", base: `{"a":"` + strings.Repeat("x", 100) + `","n":9,"b":"` + strings.Repeat("y", 100) + `"}`,
			target: `{"a":"` + strings.Repeat("x", 100) + `","n":10,"b":"` + strings.Repeat("y", 100) + `"}`},
		{name: "two lengths", base: strings.Repeat("abcdefghij", 20) + "1" + strings.Repeat("klmnopqrst", 20) + "22" + strings.Repeat("uvwxyz", 20),
			target: strings.Repeat("abcdefghij", 20) + "333" + strings.Repeat("klmnopqrst", 20) + "4" + strings.Repeat("uvwxyz", 20)},
		{name: "moved", base: string(long), target: string(moved)},
		{name: "unrelated", base: strings.Repeat("a", 1000), target: strings.Repeat("b", 1000)},
		{name: "repeats", base: strings.Repeat("ab", 1000), target: strings.Repeat("ab", 999) + "c"},
	} {
		var enc fossil.Encoder
		for _, pair := range [][2][]byte{{[]byte(tt.base), []byte(tt.target)}, {feed(3), feed(4)}, {[]byte(tt.target), []byte(tt.base)}} {
			base, target := pair[0], pair[1]
			d := enc.AppendCreate([]byte("kept"), base, target)
			if !bytes.HasPrefix(d, []byte("kept")) {
				t.Fatalf("%s: dst not kept: %q", tt.name, d)
			}
			check(t, base, target, d[4:])
		}
	}
}

// TestCreateSmall: the deltas of a feed are about as small as those of
// the module's encoder, which hashes every block, and of a changed field
// a few bytes.
func TestCreateSmall(t *testing.T) {
	t.Parallel()
	var enc fossil.Encoder
	for i := 1; i < 40; i++ {
		base, target := feed(i-1), feed(i)
		d, ref := enc.AppendCreate(nil, base, target), fdelta.Create(base, target)
		if len(d) > len(ref)+8 || len(d) > 100 {
			t.Errorf("message %d: a delta of %d bytes (%q), fdelta's %d (%q)", i, len(d), d, len(ref), ref)
		}
	}
	base := []byte(`{"a":"` + strings.Repeat("x", 100) + `","n":9,"b":"` + strings.Repeat("y", 100) + `"}`)
	target := bytes.Replace(base, []byte(`"n":9`), []byte(`"n":10`), 1)
	if d := enc.AppendCreate(nil, base, target); len(d) > 24 {
		t.Errorf("a longer field: a delta of %d bytes: %q", len(d), d)
	}
}

// TestCreateVectors makes the deltas of Fossil's own vectors' pairs.
func TestCreateVectors(t *testing.T) {
	t.Parallel()
	var enc fossil.Encoder
	for _, dir := range vectors(t) {
		origin, target := read(t, dir, "origin"), read(t, dir, "target")
		check(t, origin, target, enc.AppendCreate(nil, origin, target))
		check(t, target, origin, enc.AppendCreate(nil, target, origin))
	}
}

// TestCreateAllocs: a warm Encoder appending to a buffer that fits
// allocates nothing.
func TestCreateAllocs(t *testing.T) {
	var enc fossil.Encoder
	base, target := feed(1), bytes.Repeat([]byte("z"), 2000)
	dst := enc.AppendCreate(nil, base, target)
	if n := testing.AllocsPerRun(100, func() { dst = enc.AppendCreate(dst[:0], base, target) }); n != 0 {
		t.Errorf("%v allocations a delta", n)
	}
}

// FuzzCreate: any target is rebuilt from its delta from any base, by
// Apply and by the module's decoder, with an Encoder used before.
func FuzzCreate(f *testing.F) {
	f.Add(feed(1), feed(2))
	f.Add([]byte(""), []byte("abc"))
	f.Add([]byte("abcdefghijklmnopqrstuvwxyz"), []byte("abcdefghijklmNOPqrstuvwxyz!"))
	for _, dir := range vectors(f) {
		origin, target := read(f, dir, "origin"), read(f, dir, "target")
		f.Add(origin[:min(len(origin), 512)], target[:min(len(target), 512)])
	}
	var enc fossil.Encoder
	f.Fuzz(func(t *testing.T, base, target []byte) {
		check(t, base, target, enc.AppendCreate(nil, base, target))
		check(t, target, base, enc.AppendCreate(nil, target, base))
	})
}

// BenchmarkCreate is a delta of a message of the 2 KB feed from the one
// before, by Encoder and by the module's encoder.
func BenchmarkCreate(b *testing.B) {
	msgs := make([][]byte, 17)
	for i := range msgs {
		msgs[i] = feed(i)
	}
	for _, enc := range []struct {
		name   string
		create func(dst, base, target []byte) []byte
	}{
		{name: "Encoder", create: new(fossil.Encoder).AppendCreate},
		{name: "fdelta", create: fdelta.AppendCreate},
	} {
		b.Run(enc.name, func(b *testing.B) {
			var dst []byte
			size, n := 0, 0
			for b.Loop() {
				i := 1 + n%(len(msgs)-1)
				dst = enc.create(dst[:0], msgs[i-1], msgs[i])
				size += len(dst)
				n++
			}
			b.ReportMetric(float64(size)/float64(n), "delta-B")
		})
	}
}

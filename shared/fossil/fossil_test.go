package fossil_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/centrifugal/fdelta"

	"github.com/sluicehq/sluice/shared/fossil"
)

// The vectors in testdata/vectors are origin, target and delta triples
// that Fossil itself made (fossil test-delta-create), as kept by
// github.com/centrifugal/fdelta (MIT; see its README there).
func vectors(t testing.TB) []string {
	t.Helper()
	dirs, err := filepath.Glob("testdata/vectors/[0-9]*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no vectors: %v", err)
	}
	return dirs
}

func read(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestVectors applies Fossil's own deltas, and the module's deltas of
// the same pairs.
func TestVectors(t *testing.T) {
	t.Parallel()
	for _, dir := range vectors(t) {
		origin, target, delta := read(t, dir, "origin"), read(t, dir, "target"), read(t, dir, "delta")
		for name, d := range map[string][]byte{"fossil": delta, "fdelta": fdelta.Create(origin, target)} {
			got, err := fossil.Apply(nil, origin, d, 1<<30)
			if err != nil || !bytes.Equal(got, target) {
				t.Errorf("%s, %s delta: %d bytes, %v; want the %d bytes of target", dir, name, len(got), err, len(target))
			}
		}
		if _, err := fossil.Apply(nil, origin, delta, len(target)-1); err == nil {
			t.Errorf("%s: a delta past the limit applied", dir)
		}
		if len(origin) > 0 {
			other := append([]byte{origin[0] ^ 1}, origin[1:]...)
			if _, err := fossil.Apply(nil, other, delta, 1<<30); err == nil && !bytes.Equal(origin, other) {
				// Only a copy of the first byte reads it; where one does,
				// the checksum catches the other base.
				if bytes.Contains(delta, []byte("@0,")) {
					t.Errorf("%s: a delta applied to another base", dir)
				}
			}
		}
	}
}

// TestSpecExample checks the numbers of the format's worked example
// (delta_format.wiki, section 4): its header and its checksum.
func TestSpecExample(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		in   string
		n    uint32
	}{
		{name: "zero", in: "0;", n: 0},
		{name: "header", in: "1Xb\n", n: 6246},
		{name: "checksum", in: "2zMM3E;", n: 4294967296 - 1101438770},
	} {
		// A delta of n bytes of nothing: refused, but only after its
		// header, which says n.
		_, err := fossil.Apply(nil, nil, []byte(tt.in), int(tt.n)-1)
		if tt.n > 0 && err == nil {
			t.Errorf("%s: %q applied past a limit of %d", tt.name, tt.in, tt.n-1)
		}
	}
	// "abc" from nothing: an insert, then the checksum of "abc".
	sum := uint32('a')<<24 | uint32('b')<<16 | uint32('c')<<8
	d := append([]byte("3\n3:abc"), []byte(number(sum)+";")...)
	if got, err := fossil.Apply([]byte("x"), nil, d, 3); err != nil || string(got) != "xabc" {
		t.Errorf("Apply(%q) = %q, %v; want xabc", d, got, err)
	}
}

// number writes n in the format's base 64.
func number(n uint32) string {
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
	if n == 0 {
		return "0"
	}
	var s []byte
	for ; n > 0; n >>= 6 {
		s = append([]byte{digits[n&63]}, s...)
	}
	return string(s)
}

// FuzzApply checks Apply against the module's decoder on any base and
// delta (the same result, or both refusing), and that it rebuilds any
// target from the module's delta of it.
func FuzzApply(f *testing.F) {
	for _, dir := range vectors(f) {
		origin, delta := read(f, dir, "origin"), read(f, dir, "delta")
		f.Add(origin[:min(len(origin), 512)], delta, []byte(nil))
	}
	f.Add([]byte(`{"a":1,"b":"x"}`), []byte("3\n3:abc"), []byte(`{"a":2,"b":"x"}`))
	f.Add([]byte(""), []byte("0\n0;"), []byte(""))
	f.Fuzz(func(t *testing.T, base, delta, target []byte) {
		const limit = 1 << 20
		got, err := fossil.Apply(nil, base, delta, limit)
		want, werr := fdelta.Apply(base, delta)
		if n, _ := fdelta.OutputSize(delta); werr == nil && n > limit {
			want, werr = nil, fossil.ErrDelta // past the limit: refused
		}
		if (err == nil) != (werr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("Apply = %q, %v; fdelta.Apply = %q, %v", got, err, want, werr)
		}
		d := fdelta.Create(base, target)
		if out, err := fossil.Apply(nil, base, d, len(target)); err != nil || !bytes.Equal(out, target) {
			t.Fatalf("the delta %q of %q from %q made %q, %v", d, target, base, out, err)
		}
	})
}

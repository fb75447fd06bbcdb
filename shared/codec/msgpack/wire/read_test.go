package wire_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

func TestHead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		item string
		kind wire.Kind
		n    uint64
		next int
		err  error
	}{
		{name: "positive fixint", item: "7f", kind: wire.KindUint, n: 127, next: 1},
		{name: "negative fixint", item: "e0", kind: wire.KindInt, n: uint64(math.MaxUint64 - 31), next: 1},
		{name: "fixmap", item: "8f", kind: wire.KindMap, n: 15, next: 1},
		{name: "fixarray", item: "93", kind: wire.KindArray, n: 3, next: 1},
		{name: "fixstr", item: "a3616263", kind: wire.KindString, n: 3, next: 1},
		{name: "nil", item: "c0", kind: wire.KindNil, next: 1},
		{name: "true", item: "c3", kind: wire.KindBool, n: 1, next: 1},
		{name: "false", item: "c2", kind: wire.KindBool, next: 1},
		{name: "bin16", item: "c50100", kind: wire.KindBinary, n: 256, next: 3},
		{name: "float32", item: "ca3fc00000", kind: wire.KindFloat32, n: 0x3fc00000, next: 5},
		{name: "float64", item: "cb3ff8000000000000", kind: wire.KindFloat64, n: math.Float64bits(1.5), next: 9},
		{name: "uint64", item: "cfffffffffffffffff", kind: wire.KindUint, n: math.MaxUint64, next: 9},
		{name: "int8", item: "d0df", kind: wire.KindInt, n: uint64(math.MaxUint64 - 32), next: 2},
		{name: "int16", item: "d1ff7f", kind: wire.KindInt, n: uint64(math.MaxUint64 - 128), next: 3},
		{name: "str8", item: "d920", kind: wire.KindString, n: 32, next: 2},
		{name: "array32", item: "dd00010000", kind: wire.KindArray, n: 65536, next: 5},
		{name: "map16", item: "de0010", kind: wire.KindMap, n: 16, next: 3},
		{name: "fixext4", item: "d6ff00000001", kind: wire.KindExt, n: 5, next: 1},
		{name: "ext8", item: "c701ff00", kind: wire.KindExt, n: 2, next: 2},
		{name: "empty", item: "", err: wire.ErrTruncated},
		{name: "reserved", item: "c1", err: wire.ErrReserved},
		{name: "cut value", item: "cd01", kind: wire.KindUint, err: wire.ErrTruncated},
		{name: "cut ext length", item: "c8ff", kind: wire.KindExt, err: wire.ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := append([]byte{0xff}, unhex(t, tt.item)...) // not at the start
			k, n, next, err := wire.Head(b, 1)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if k != tt.kind {
				t.Fatalf("kind %d, want %d", k, tt.kind)
			}
			if err == nil && (n != tt.n || next != tt.next+1) {
				t.Fatalf("n %d next %d, want %d %d", n, next, tt.n, tt.next+1)
			}
		})
	}
}

func TestSkip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		item   string
		end    int // 0 means the whole item
		err    error
		binary bool
	}{
		{name: "scalar", item: "cd0100"},
		{name: "followed", item: "92c0c3c2", end: 3},
		{name: "map", item: "82a16193c0c3c2a162cb3ff8000000000000"},
		{name: "binary", item: "91c40161", binary: true},
		{name: "empty", item: "", err: wire.ErrTruncated},
		{name: "cut string", item: "a361", err: wire.ErrTruncated},
		{name: "cut map", item: "82a16101", err: wire.ErrTruncated},
		{name: "forged length", item: "ddffffffff", err: wire.ErrTruncated},
		{name: "reserved inside", item: "91c1", err: wire.ErrReserved},
		{name: "extension", item: "91d6ff00000001", err: wire.ErrExt},
		{name: "cut extension", item: "d6ff00", err: wire.ErrTruncated},
		{name: "invalid UTF-8", item: "a2c328", err: wire.ErrUTF8},
		{name: "invalid UTF-8 key", item: "81a1ff01", err: wire.ErrUTF8},
		{name: "deepest", item: strings.Repeat("91", wire.MaxNesting) + "c0"},
		{name: "too deep", item: strings.Repeat("91", wire.MaxNesting+1) + "c0", err: wire.ErrDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := unhex(t, tt.item)
			want := tt.end
			if want == 0 {
				want = len(b)
			}
			var s wire.Scanner
			end, err := s.Skip(b, 0, 0)
			if !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if err == nil && end != want {
				t.Fatalf("end %d, want %d", end, want)
			}
			if s.Binary != tt.binary {
				t.Fatalf("Binary %v, want %v", s.Binary, tt.binary)
			}
		})
	}
}

// FuzzSkip checks that Skip never panics nor reads past its input, and
// that an item it accepts is accepted alone, as an item of an array and
// not one byte shorter.
func FuzzSkip(f *testing.F) {
	for _, seed := range []string{"82a16193c0c3c2a162cb3ff8000000000000", "91c40161", "ddffffffff", "d6ff00000001", "c701ff00", "a2c328", "dc0001cfffffffffffffffff"} {
		f.Add(unhex(f, seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s wire.Scanner
		end, err := s.Skip(b, 0, 0)
		if err != nil {
			return
		}
		if end < 1 || end > len(b) {
			t.Fatalf("end %d outside 1..%d", end, len(b))
		}
		item := b[:end]
		if again, err := s.Skip(item, 0, 0); err != nil || again != end {
			t.Fatalf("alone: %d, %v; want %d", again, err, end)
		}
		if _, err := s.Skip(item[:end-1], 0, 0); err == nil {
			t.Fatal("the item less its last byte is accepted")
		}
		in := append([]byte{0x91}, item...)
		if got, err := s.Skip(in, 0, 0); err != nil && !errors.Is(err, wire.ErrDeep) || err == nil && got != len(in) {
			t.Fatalf("in an array: %d, %v", got, err)
		}
	})
}

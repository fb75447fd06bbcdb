package wire_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

func TestDecoderValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		item string
		want any
	}{
		{name: "nil", item: "c0", want: nil},
		{name: "true", item: "c3", want: true},
		{name: "false", item: "c2", want: false},
		{name: "fixint", item: "7f", want: int64(127)},
		{name: "negative fixint", item: "e0", want: int64(-32)},
		{name: "uint8", item: "ccff", want: int64(255)},
		{name: "max int64 as uint64", item: "cf7fffffffffffffff", want: int64(math.MaxInt64)},
		{name: "above int64", item: "cf8000000000000000", want: uint64(math.MaxInt64) + 1},
		{name: "int16", item: "d1ff7f", want: int64(-129)},
		{name: "min int64", item: "d38000000000000000", want: int64(math.MinInt64)},
		{name: "float32", item: "ca3fc00000", want: 1.5},
		{name: "float64", item: "cb3ff8000000000000", want: 1.5},
		{name: "string", item: "a3616263", want: "abc"},
		{name: "str8", item: "d903c3bc21", want: "ü!"},
		{name: "empty binary", item: "c400", want: []byte{}},
		{name: "binary", item: "c5000201ff", want: []byte{1, 0xff}},
		{name: "empty array", item: "90", want: []any{}},
		{name: "array", item: "93c0a1789101", want: []any{nil, "x", []any{int64(1)}}},
		{name: "map", item: "82a16101a162c3", want: map[string]any{"a": int64(1), "b": true}},
		{name: "binary and nil keys", item: "82c4016101c002", want: map[string]any{"a": int64(1), "": int64(2)}},
		{name: "key given twice", item: "83a16101a16202a16103", want: map[string]any{"a": int64(3), "b": int64(2)}},
		{name: "map32", item: "df00000001a0c0", want: map[string]any{"": nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := unhex(t, tt.item)
			d := wire.NewDecoder(b)
			got, err := d.Value(0)
			if err != nil || d.End() != nil {
				t.Fatalf("Value: %v, End: %v", err, d.End())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Value = %#v, want %#v", got, tt.want)
			}
			if d.NonCanonical() {
				t.Fatal("a canonical value is noted as not")
			}
			for i := range b {
				b[i] = 0 // values do not alias the input
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("after the input changed, Value = %#v", got)
			}
		})
	}
}

func TestDecoderRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		item string
		err  error
	}{
		{name: "empty", item: "", err: wire.ErrTruncated},
		{name: "cut number", item: "cd01", err: wire.ErrTruncated},
		{name: "cut string", item: "a36100", err: wire.ErrTruncated},
		{name: "forged array", item: "ddffffffff", err: wire.ErrTruncated},
		{name: "forged map", item: "df7fffffff", err: wire.ErrTruncated},
		{name: "reserved", item: "91c1", err: wire.ErrReserved},
		{name: "extension", item: "91d6ff00000001", err: wire.ErrExt},
		{name: "cut extension", item: "c8ff", err: wire.ErrExt},
		{name: "invalid UTF-8", item: "a2c328", err: wire.ErrUTF8},
		{name: "invalid UTF-8 key", item: "81a1ff01", err: wire.ErrUTF8},
		{name: "integer key", item: "810101", err: wire.ErrKey},
		{name: "array key", item: "8190c0", err: wire.ErrKey},
		{name: "too deep", item: strings.Repeat("91", wire.MaxNesting+1) + "c0", err: wire.ErrDeep},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := wire.NewDecoder(unhex(t, tt.item))
			if _, err := d.Value(0); !errors.Is(err, tt.err) {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
		})
	}
}

// TestDecoderNotes checks what the Decoder lets through for normalization
// to refuse.
func TestDecoderNotes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		item    string
		odd     bool
		deepest int
	}{
		{name: "scalar", item: "01"},
		{name: "nested", item: "9181a16190", deepest: 3},
		{name: "deepest", item: strings.Repeat("91", wire.MaxNesting) + "c0", deepest: wire.MaxNesting},
		{name: "NaN", item: "91cb7ff8000000000001", odd: true, deepest: 1},
		{name: "float32 infinity", item: "caff800000", odd: true},
		{name: "binary key not UTF-8", item: "81c401ff01", odd: true, deepest: 1},
		{name: "binary value not UTF-8", item: "c401ff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := wire.NewDecoder(unhex(t, tt.item))
			if _, err := d.Value(0); err != nil {
				t.Fatal(err)
			}
			if d.NonCanonical() != tt.odd || d.Deepest() != tt.deepest {
				t.Fatalf("NonCanonical %v Deepest %d, want %v %d", d.NonCanonical(), d.Deepest(), tt.odd, tt.deepest)
			}
		})
	}
}

func TestDecoderKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		item string
		key  string
		kind wire.Kind
		odd  bool
		err  error
	}{
		{name: "string", item: "a26964", key: "id", kind: wire.KindString},
		{name: "binary", item: "c4026964", key: "id", kind: wire.KindBinary},
		{name: "binary not UTF-8", item: "c401ff", key: "\xff", kind: wire.KindBinary, odd: true},
		{name: "nil", item: "c0", kind: wire.KindNil},
		{name: "integer", item: "01", kind: wire.KindUint, err: wire.ErrKey},
		{name: "string not UTF-8", item: "a1ff", kind: wire.KindString, err: wire.ErrUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := wire.NewDecoder(unhex(t, tt.item))
			key, kind, err := d.Key()
			if !errors.Is(err, tt.err) || kind != tt.kind {
				t.Fatalf("kind %d error %v, want %d %v", kind, err, tt.kind, tt.err)
			}
			if err == nil && (string(key) != tt.key || d.End() != nil || d.NonCanonical() != tt.odd) {
				t.Fatalf("key %q End %v NonCanonical %v, want %q <nil> %v", key, d.End(), d.NonCanonical(), tt.key, tt.odd)
			}
		})
	}
}

func TestDecoderSkip(t *testing.T) {
	t.Parallel()
	d := wire.NewDecoder(unhex(t, "92a16191c0"+"05"))
	if err := d.Skip(0); err != nil || d.Offset() != 5 {
		t.Fatalf("Skip: %v, offset %d; want 5", err, d.Offset())
	}
	if v, err := d.Value(0); err != nil || v != int64(5) || d.End() != nil {
		t.Fatalf("the item after: %v, %v, End %v", v, err, d.End())
	}
	d = wire.NewDecoder(unhex(t, "91d40100"))
	if err := d.Skip(0); !errors.Is(err, wire.ErrExt) || d.Offset() != 0 {
		t.Fatalf("Skip of an extension: %v, offset %d", err, d.Offset())
	}
}

// FuzzDecoder checks that the Decoder accepts what Scanner accepts, but
// keys other than strings, binary and nil, and that what it lets through
// without noting it is canonical: codec.Normalize keeps it as it is, and
// it encodes and decodes back to itself.
func FuzzDecoder(f *testing.F) {
	for _, seed := range []string{
		"82a16193c0c3c2a162cb3ff8000000000000", "83a16101a16202a16103", "82c4016101c002", "91c40161",
		"ddffffffff", "d6ff00000001", "a2c328", "dc0001cfffffffffffffffff", "810101", "81c401ff01",
		"91cb7ff8000000000001", "ca3fc00000", strings.Repeat("91", codec.MaxDepth+1) + "c0",
	} {
		f.Add(unhex(f, seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := wire.NewDecoder(b)
		v, err := d.Value(0)
		var s wire.Scanner
		end, scanErr := s.Skip(b, 0, 0)
		switch {
		case err == nil && (scanErr != nil || end != d.Offset()):
			t.Fatalf("decoded to %d, scanned to %d, %v", d.Offset(), end, scanErr)
		case err != nil && scanErr == nil && !errors.Is(err, wire.ErrKey):
			t.Fatalf("Value: %v, Scanner accepts", err)
		case err != nil || d.NonCanonical() || d.Deepest() > codec.MaxDepth:
			return
		}
		n, err := codec.Normalize(v)
		if err != nil || !reflect.DeepEqual(n, v) {
			t.Fatalf("Normalize(%#v) = %#v, %v", v, n, err)
		}
		enc, err := wire.AppendValue(nil, v)
		if err != nil {
			t.Fatalf("AppendValue(%#v): %v", v, err)
		}
		d = wire.NewDecoder(enc)
		if again, err := d.Value(0); err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("%#v encodes as %x, decoded as %#v, %v", v, enc, again, err)
		}
	})
}

// TestPeek checks that Peek tells every type byte's kind as Head does,
// with the errors of the reserved byte and of extensions, without
// reading the item.
func TestPeek(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		item := append([]byte{byte(c)}, make([]byte, 16)...)
		d := wire.NewDecoder(item)
		k, err := d.Peek()
		want, _, _, headErr := wire.Head(item, 0)
		switch {
		case c == 0xc1:
			if err != wire.ErrReserved {
				t.Errorf("%#x: Peek %v, want ErrReserved", c, err)
			}
		case want == wire.KindExt:
			if k != wire.KindExt || err != wire.ErrExt {
				t.Errorf("%#x: Peek %v %v, want an extension refused", c, k, err)
			}
		case headErr != nil || err != nil || k != want:
			t.Errorf("%#x: Peek %v %v, Head %v %v", c, k, err, want, headErr)
		}
		if d.Offset() != 0 {
			t.Errorf("%#x: Peek read the item", c)
		}
	}
	var empty wire.Decoder
	if _, err := empty.Peek(); err != wire.ErrTruncated {
		t.Errorf("Peek of nothing: %v, want ErrTruncated", err)
	}
}

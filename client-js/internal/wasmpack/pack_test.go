package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// module builds a module of a custom section and the given data section
// body, as sections in that order.
func module(data []byte, extra ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	custom := []byte("\x04note1234")
	b = append(b, 0)
	b = binary.AppendUvarint(b, uint64(len(custom)))
	b = append(b, custom...)
	for _, e := range extra {
		b = append(b, e...)
	}
	b = append(b, sectionData)
	b = binary.AppendUvarint(b, uint64(len(data)))
	return append(b, data...)
}

func TestPackJoinsNearSegments(t *testing.T) {
	t.Parallel()
	in := []segment{
		{offset: 10, data: []byte("de")}, // out of order on purpose
		{offset: 0, data: []byte("abc")},
		{offset: 12, data: []byte("f")},     // adjacent
		{offset: 9000, data: []byte("far")}, // past maxGap
		{offset: 1 << 20, data: []byte{0x80, 0x7f}},
	}
	out, err := Pack(module(writeSegments(in)))
	if err != nil {
		t.Fatal(err)
	}
	want := []segment{
		{offset: 0, data: []byte("abc\x00\x00\x00\x00\x00\x00\x00def")},
		{offset: 9000, data: []byte("far")},
		{offset: 1 << 20, data: []byte{0x80, 0x7f}},
	}
	if !bytes.Equal(out, module(writeSegments(want))) {
		t.Fatalf("Pack = % x\nwant   % x", out, module(writeSegments(want)))
	}
	again, err := Pack(out)
	if err != nil || !bytes.Equal(again, out) {
		t.Fatalf("Pack of a packed module changed it (%v)", err)
	}
}

func TestPackRefuses(t *testing.T) {
	t.Parallel()
	passive := []byte{1, 1, 3, 'a', 'b', 'c'} // one passive segment
	overlap := writeSegments([]segment{{offset: 0, data: []byte("abcd")}, {offset: 2, data: []byte("x")}})
	global := []byte{1, 0, 0x23, 0, opEnd, 1, 'a'} // offset from global.get 0
	dataCount := []byte{sectionDataCount, 1, 0}
	for name, mod := range map[string][]byte{
		"not wasm":   []byte("hello, world"),
		"passive":    module(passive),
		"overlap":    module(overlap),
		"global":     module(global),
		"data count": module(writeSegments(nil), dataCount),
		"cut off":    module(writeSegments([]segment{{offset: 0, data: []byte("abc")}}))[:20],
	} {
		if _, err := Pack(mod); !errors.Is(err, errFormat) {
			t.Errorf("%s: Pack error %v, want errFormat", name, err)
		}
	}
}

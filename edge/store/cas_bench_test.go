package store

import (
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// BenchmarkAppendIf64 is BenchmarkAppend64 as a compare-and-set that also
// reads the previous message (rtm/write with position and read): the
// check and the copy of the 64-byte previous message into a reused
// buffer, under the writer lock, must not allocate.
func BenchmarkAppendIf64(b *testing.B) {
	s := New(nil)
	defer s.Close()
	h := s.Channel("bench")
	data := make([]byte, 64)
	at, err := h.Append(data)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	b.SetBytes(64)
	b.ReportAllocs()
	for b.Loop() {
		var prior Prior
		expect := at
		at, prior, err = h.AppendIf(data, 0, &expect, buf)
		if err != nil {
			b.Fatal(err)
		}
		buf = prior.Data[:0]
	}
	if at == (rtm.Position{}) {
		b.Fatal("no position")
	}
}

package view_test

import (
	"testing"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

func BenchmarkTmpSkip(b *testing.B) {
	m := enc(b, benchMsg)
	var s wire.Scanner
	for b.Loop() {
		if _, err := s.Skip(m, 0, 0); err != nil { b.Fatal(err) }
	}
}

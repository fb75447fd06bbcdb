package msgpack_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
)

func BenchmarkCodec(b *testing.B) { codectest.Bench(b, c) }

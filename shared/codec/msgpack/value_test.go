package msgpack_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestDecodeValue reads back what AppendValue writes, as a receiver of the
// value in a body would, and refuses what is not one value of the model.
func TestDecodeValue(t *testing.T) {
	t.Parallel()
	values := []any{nil, true, int64(-1), int64(math.MinInt64), uint64(math.MaxUint64), 1.5, "", "ü",
		[]byte{}, []any{}, map[string]any{}, codectest.Message(), codectest.Deep(codec.MaxDepth)}
	for _, v := range values {
		enc := codectest.Value(t, c, v)
		got, err := c.DecodeValue(enc)
		if err != nil {
			t.Fatalf("DecodeValue(%x): %v", enc, err)
		}
		if want := codectest.Received(t, c, enc); !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeValue(%x) = %#v, in a body %#v", enc, got, want)
		}
	}
	refused := []struct{ name, enc, reason string }{
		{"empty", "", "value is not valid msgpack: truncated"},
		{"extra data", "01c0", "value is not valid msgpack: extra data after the end"},
		{"extension", "d6ff00000001", "value is not valid msgpack: extension types are not supported"},
		{"integer map key", "810101", string(rtm.MessageKeyType)},
		{"NaN", nan, string(rtm.MessageNonFinite)},
		{"binary map key not UTF-8", "81c401ff01", string(rtm.MessageKeyNotUTF8)},
		{"too deep", strings.Repeat("91", codec.MaxDepth+1) + "c0", string(rtm.MessageTooDeep)},
	}
	for _, tt := range refused {
		_, err := c.DecodeValue(unhex(t, tt.enc))
		if e, ok := rtm.AsError(err); !ok || e.Code != rtm.CodeInvalidFormat || e.Reason != tt.reason {
			t.Errorf("%s: DecodeValue error %v, want invalid_format %q", tt.name, err, tt.reason)
		}
	}
}

package cbor_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func FuzzDecodeCBOR(f *testing.F) {
	codectest.Fuzz(f, c, rtm.CodeCBORParseError,
		unhex(f, "a3"+"66616374696f6e"+"6b72746d2f7075626c697368"+"626964"+"1b0000000000000007"+"64626f6479"+
			"a2"+"676368616e6e656c"+"6163"+"676d657373616765"+"a3"+"6166"+"f93e00"+"6175"+"1bffffffffffffffff"+"6162"+"420102"),
		unhex(f, "a2"+"66616374696f6e"+"6161"+"64626f6479"+"a1"+"676d657373616765"+"f7"),
		unhex(f, "bf66616374696f6e6161ff"),
		unhex(f, "a2"+"66616374696f6e"+"6161"+"626964"+"3b8000000000000000"),
	)
}

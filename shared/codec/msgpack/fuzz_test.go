package msgpack_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

func FuzzDecodeMsgpack(f *testing.F) {
	codectest.Fuzz(f, c, rtm.CodeInvalidFormat,
		unhex(f, "83"+actionA+id+"cf0000000000000007"+body+"82"+channel+"a163"+message+"83a166ca3f000000a175cfffffffffffffffffa162c4020102"),
		unhex(f, "82"+actionA+body+"81"+channel+"c401ff"),
		unhex(f, "82"+actionA+body+"81"+message+"d6ff00000001"),
		unhex(f, "82"+actionA+body+"81"+message+"810101"),
		unhex(f, "82"+actionA+id+"d0f9"),
	)
}

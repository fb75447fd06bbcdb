package msgpack_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/rtm"
)

// FuzzDecodeMsgpack fuzzes Decode and DecodeBody into every body type
// (codectest.Fuzz), seeded with every PDU the browser sends or receives
// too.
func FuzzDecodeMsgpack(f *testing.F) {
	seeds := [][]byte{
		unhex(f, "83"+actionA+id+"cf0000000000000007"+body+"82"+channel+"a163"+message+"83a166ca3f000000a175cfffffffffffffffffa162c4020102"),
		unhex(f, "82"+actionA+body+"81"+channel+"c401ff"),
		unhex(f, "82"+actionA+body+"81"+message+"d6ff00000001"),
		unhex(f, "82"+actionA+body+"81"+message+"810101"),
		unhex(f, "82"+actionA+id+"d0f9"),
	}
	for _, s := range browserSamples() {
		withoutLong(s.pdu.Body) // small seeds mutate faster
		if frame, err := c.AppendPDU(nil, &s.pdu); err == nil {
			seeds = append(seeds, frame)
		}
	}
	codectest.Fuzz(f, c, rtm.CodeInvalidFormat, seeds...)
}

package json

import (
	"unicode/utf8"
	"unsafe"

	"github.com/sluicehq/sluice/shared/rtm"
)

// AppendDelta implements codec.DeltaEncoder: delta as a JSON string of
// its bytes, which must be UTF-8 (a fossil delta of JSON text nearly
// always is: its commands are ASCII, its literals pieces of the message,
// unless one splits a character). appendString would replace a broken
// character with U+FFFD, and the client could not get the bytes back.
func (Codec) AppendDelta(dst, delta []byte) ([]byte, bool) {
	if !utf8.Valid(delta) {
		return dst, false
	}
	return appendString(dst, unsafe.String(unsafe.SliceData(delta), len(delta))), true
}

// AppendDeltaData implements codec.DeltaEncoder.
func (Codec) AppendDeltaData(dst []byte, subscriptionID string, pos rtm.Position, deltas [][]byte) []byte {
	dst = append(dst, `{"action":"rtm/subscription/data","body":{"subscription_id":`...)
	dst = appendString(dst, subscriptionID)
	dst = append(dst, `,"position":"`...)
	dst = pos.AppendText(dst)
	dst = append(dst, `","messages":[`...)
	for i, m := range deltas {
		dst = append(separate(dst, i), m...)
	}
	return append(dst, `],"delta":true}}`...)
}

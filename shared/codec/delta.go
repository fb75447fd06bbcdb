package codec

import "github.com/sluicehq/sluice/shared/rtm"

// DeltaEncoder is implemented by the codecs that carry the delta
// extension (rtm.SubscribeBody.Delta): JSON and msgpack. The edge writes
// a subscription's messages after the first as fossil deltas against the
// message before, each encoded in the subscriber's codec, and the client
// applies them to the encoding it kept of that message.
type DeltaEncoder interface {
	// AppendDelta appends delta, a fossil delta, as a message value of
	// the codec: binary in msgpack, a string of its bytes in JSON. It
	// reports false, dst unchanged, for a delta the codec cannot carry
	// so (JSON: bytes that are not UTF-8): the message goes whole.
	AppendDelta(dst, delta []byte) ([]byte, bool)
	// AppendDeltaData appends an rtm/subscription/data PDU whose messages
	// are deltas written by AppendDelta, with delta: true. Like
	// Codec.AppendData it splices them in as they are and does not
	// allocate.
	AppendDeltaData(dst []byte, subscriptionID string, pos rtm.Position, deltas [][]byte) []byte
}

package client

import (
	"errors"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/fossil"
)

// The delta extension (SubscribeOptions.Delta): the edge sends a
// subscription's messages after the first as fossil deltas against the
// encoding of the message before, in the connection's codec. The client
// keeps that encoding (Subscription.base) and applies each delta before
// the handler sees the message, so the handler gets values as without
// deltas.

// maxDeltaOutput bounds what a delta may make: a short delta can declare
// an output far larger than its base, and no message is that large.
const maxDeltaOutput = 16 << 20

// errDelta is data of a delta subscription the client cannot use: a
// delta without a message before it, of the wrong type, that does not
// apply to the message kept (its checksum fails) or does not decode; or
// a whole message it cannot keep. The subscription is resubscribed from
// before it, and the edge sends the first message after that whole.
var errDelta = errors.New("client: a delta that does not apply")

// applyDeltasLocked turns the messages of a data push of s into values:
// each is a delta against the one before it when delta is set, else a
// whole message. It keeps the encoding of the last one as s.base. On
// error s.base is dropped, and the messages must not be delivered.
func (s *Subscription) applyDeltasLocked(cd codec.Codec, messages []any, delta bool) error {
	base := s.base
	s.base = nil
	var err error
	if !delta && len(messages) > 0 {
		// Only the last whole message can be the base of the next delta;
		// not written over the old base, which a delivered value may alias.
		base, err = cd.AppendValue(nil, messages[len(messages)-1])
	}
	for i := 0; delta && i < len(messages) && err == nil; i++ {
		var d []byte
		switch x := messages[i].(type) {
		case []byte: // binary codecs
			d = x
		case string: // JSON: the delta's bytes as a string
			d = []byte(x)
		}
		if d == nil || base == nil {
			return errDelta
		}
		if base, err = fossil.Apply(nil, base, d, maxDeltaOutput); err == nil {
			messages[i], err = decodeValue(cd, base)
		}
	}
	if err != nil {
		return errDelta
	}
	s.base = base
	return nil
}

// decodeValue decodes one message value of cd, in the canonical model:
// every codec's DecodeBody takes a *any (codec.ValueDecoder would link
// more code into sluice.wasm).
func decodeValue(cd codec.Codec, b []byte) (any, error) {
	var v any
	err := cd.DecodeBody(b, &v)
	return v, err
}

package client

import (
	"errors"

	"github.com/centrifugal/fdelta"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// The delta extension (SubscribeOptions.Delta): the edge sends a
// subscription's messages after the first as fossil deltas against the
// encoding of the message before, in the connection's codec. The client
// keeps that encoding (Subscription.base) and applies each delta before
// the handler sees the message, so the handler gets values as without
// deltas.

// maxDeltaOutput bounds what a delta may make: a short delta can declare
// an output far larger than its base (fdelta.OutputSize), and no message
// is larger than a frame the client reads.
const maxDeltaOutput = 16 << 20

// errDelta is a delta the client cannot apply: without a message before
// it, of the wrong type, or one that does not apply to the message kept
// (its checksum fails). The subscription is resubscribed from before it,
// and the edge sends the first message after that whole.
var errDelta = errors.New("client: a delta that does not apply")

// applyDeltasLocked turns the messages of a data push of s into values:
// each is a delta against the one before it when delta is set, else a
// whole message. It keeps the encoding of the last one as s.base. On
// error, s.base is dropped and messages must not be delivered.
func (s *Subscription) applyDeltasLocked(cd codec.Codec, messages []any, delta bool) error {
	if !delta {
		if len(messages) == 0 {
			return nil
		}
		// Only the last whole message can be the base of the next delta.
		b, err := cd.AppendValue(nil, messages[len(messages)-1]) // not over the old base, which a delivered value may alias
		if err != nil {
			s.base = nil
			return errtext.Wrap("client: delta base", err)
		}
		s.base = b
		return nil
	}
	for i, m := range messages {
		v, err := s.applyDelta(cd, m)
		if err != nil {
			s.base = nil
			return err
		}
		messages[i] = v
	}
	return nil
}

// applyDelta applies the delta m, a message value, to s.base, makes the
// result the new base and returns its value.
func (s *Subscription) applyDelta(cd codec.Codec, m any) (any, error) {
	var d []byte
	switch x := m.(type) {
	case []byte: // binary codecs
		d = x
	case string: // JSON: the delta's bytes as a string
		d = []byte(x)
	default:
		return nil, errDelta
	}
	if s.base == nil {
		return nil, errDelta
	}
	n, err := fdelta.OutputSize(d)
	if err != nil || n > maxDeltaOutput {
		return nil, errDelta
	}
	out, err := fdelta.AppendApply(make([]byte, 0, n), s.base, d)
	if err != nil {
		return nil, errDelta
	}
	v, err := decodeValue(cd, out)
	if err != nil {
		return nil, errtext.Wrap("client: message from a delta", err)
	}
	s.base = out
	return v, nil
}

// decodeValue decodes one message value of cd.
func decodeValue(cd codec.Codec, b []byte) (any, error) {
	if vd, ok := cd.(codec.ValueDecoder); ok {
		return vd.DecodeValue(b)
	}
	var v any
	err := cd.DecodeBody(b, &v)
	return v, err
}

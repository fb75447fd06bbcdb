//go:build !js

// DecodeData is left out of the browser build: the one pass over a data
// push would cost sluice.wasm 1.3 KB gzipped, which it has not paid for
// yet; a browser client reads pushes the long way (Decode, DecodeBody).

package msgpack

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// DecodeData implements codec.DataDecoder for the frames the edge sends:
// a map of action and body, the body a map of subscription_id, position
// and messages, every key and string field a msgpack string, each key
// once. Anything else, and anything Decode and DecodeBody would refuse or
// normalize, is left to them.
func (Codec) DecodeData(frame []byte, d *codec.Data) bool {
	r := wire.NewDecoder(frame)
	k, n, err := r.Head()
	if err != nil || k != wire.KindMap || n != 2 {
		return false
	}
	var b dataBody
	var seen uint8
	for range n {
		key, ok := stringField(&r)
		if !ok {
			return false
		}
		var bit uint8
		switch string(key) {
		case "action":
			bit = 1
			a, ok := stringField(&r)
			if !ok || string(a) != rtm.ActionSubscriptionData {
				return false
			}
		case "body":
			bit = 2
			if !b.read(&r) {
				return false
			}
		default:
			return false // an id, or a key Decode would skip
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	// The messages are decoded as DecodeBody decodes them; what it would
	// hand to normalization goes the long way.
	if r.End() != nil || r.NonCanonical() || r.Deepest() > 2+codec.MaxDepth {
		return false
	}
	if string(b.id) != d.SubscriptionID {
		d.SubscriptionID = string(b.id)
	}
	d.Position, d.Messages = b.pos, b.messages
	return true
}

// dataBody is the body of a data push as DecodeData reads it.
type dataBody struct {
	id       []byte // aliases the frame
	pos      rtm.Position
	messages []any
}

// read reads the body map: its three fields, each once, and no other.
func (b *dataBody) read(r *wire.Decoder) bool {
	k, n, err := r.Head()
	if err != nil || k != wire.KindMap || n != 3 {
		return false
	}
	var seen uint8
	for range n {
		key, ok := stringField(r)
		if !ok {
			return false
		}
		var bit uint8
		switch string(key) {
		case "subscription_id":
			bit = 1
			var ok bool
			if b.id, ok = stringField(r); !ok {
				return false
			}
		case "position":
			bit = 2
			p, ok := stringField(r)
			if !ok {
				return false
			}
			var err error
			if b.pos, err = rtm.ParsePositionBytes(p); err != nil {
				return false
			}
		case "messages":
			bit = 4
			k, n, err := r.Head()
			if err != nil || k != wire.KindArray {
				return false
			}
			if b.messages, err = r.Array(n, 2); err != nil {
				return false
			}
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
	}
	return true
}

// stringField reads a msgpack string (checked UTF-8); the bytes alias the
// frame.
func stringField(r *wire.Decoder) ([]byte, bool) {
	p, k, err := r.Key()
	return p, err == nil && k == wire.KindString
}

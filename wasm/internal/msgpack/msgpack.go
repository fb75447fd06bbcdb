// Package msgpack is the browser client's msgpack codec: the wire format
// of shared/codec/msgpack, written without a msgpack library. That
// library (github.com/vmihailenco/msgpack, which the shared codec uses to
// map bodies onto structs) costs about 210 KB gzipped in sluice.wasm, a
// fifth of its budget, and mapping structs by reflection another 30 KB.
// Here values are decoded without it into the canonical model, and the
// bodies the client sends and receives are mapped by a type switch: the
// codec knows exactly the rtm bodies of a client, no others. The wire
// format itself (appending values, reading, checking and decoding items)
// is package shared/codec/msgpack/wire, which the shared codec uses too.
//
// The edge and the native client keep using shared/codec/msgpack; this
// package's tests check, natively, that the two read each other's frames
// to the same values.
package msgpack

import (
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// errNonCanonical refuses a body the canonical model has no room for.
var errNonCanonical = errors.New("msgpack: NaN, infinities and map keys that are not valid UTF-8 are not messages")

// Codec is the msgpack codec. The zero value is ready to use and safe for
// concurrent use.
type Codec struct{}

var _ codec.Codec = Codec{}

// Name returns "msgpack", the WebSocket subprotocol.
func (Codec) Name() string { return "msgpack" }

// Binary reports true: msgpack PDUs travel in binary frames.
func (Codec) Binary() bool { return true }

// Decode splits a frame into action, id and the raw msgpack of its body,
// which aliases frame. A frame that is not one valid msgpack map with a
// string action, an optional integer or string id and an optional map
// body, each given once, is invalid_format.
func (Codec) Decode(frame []byte) (rtm.Envelope, error) {
	d := wire.NewDecoder(frame)
	k, pairs, err := d.Head()
	if err != nil {
		return rtm.Envelope{}, invalid(err)
	}
	if k != wire.KindMap {
		return rtm.Envelope{}, codec.Invalid("PDU must be a map")
	}
	var pdu wire.PDUFields
	for ; pairs > 0; pairs-- {
		key, kind, err := d.Key()
		if err == nil && kind != wire.KindString {
			err = wire.ErrKey // as the shared codec, which takes no other
		}
		start := d.Offset()
		if err == nil {
			err = d.Skip(1)
		}
		if err != nil {
			return rtm.Envelope{}, invalid(err)
		}
		if err := pdu.Field(key, frame[start:d.Offset()]); err != nil {
			return rtm.Envelope{}, err
		}
	}
	if err := d.End(); err != nil {
		return rtm.Envelope{}, invalid(err)
	}
	return pdu.Envelope()
}

// DecodeBody decodes a body into v: a pointer to a body type of package
// rtm (or to a map[string]any or an any). Message values come out in the
// canonical model; a body holding a NaN, an infinity or a map key that is
// not valid UTF-8 anywhere is refused. A body that is not valid msgpack or
// does not fit v is invalid_format.
func (Codec) DecodeBody(body []byte, v any) error {
	d := wire.NewDecoder(body)
	val, err := d.Value(0)
	switch {
	case err != nil:
	case d.End() != nil:
		err = wire.ErrExtra
	case d.NonCanonical():
		err = errNonCanonical
	default:
		err = assign(v, val)
	}
	if err != nil {
		return invalid(err)
	}
	return nil
}

// invalid wraps a decoding failure as the invalid_format the shared codec
// reports (RTM has no msgpack error code).
func invalid(err error) *rtm.Error {
	return codec.Invalid(err.Error())
}

// encodeError wraps an encoding failure.
func encodeError(what string, err error) error {
	return fmt.Errorf("msgpack: encode %s: %w", what, err)
}

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

// emptyBody is the body of a PDU that has none: an empty map.
var emptyBody = []byte{0x80}

// Decode splits a frame into action, id and the raw msgpack of its body,
// which aliases frame. A frame that is not one valid msgpack map with a
// string action, an optional integer or string id and an optional map
// body, each given once, is invalid_format.
func (Codec) Decode(frame []byte) (rtm.Envelope, error) {
	var env rtm.Envelope
	d := wire.NewDecoder(frame)
	k, pairs, err := d.Head()
	if err != nil {
		return env, invalid(err)
	}
	if k != wire.KindMap {
		return env, invalid(errors.New("PDU must be a map"))
	}
	var seen struct{ action, id, body bool }
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
		item := frame[start:d.Offset()]
		switch string(key) {
		case "action":
			err = once(&seen.action)
			if err == nil {
				env.Action, err = actionOf(item)
			}
		case "id":
			err = once(&seen.id)
			if err == nil {
				env.ID, err = idOf(item)
			}
		case "body":
			err = once(&seen.body)
			if err == nil && !isMap(item) {
				err = errors.New("PDU body must be a map")
			}
			env.Body = item
		}
		if err != nil {
			return rtm.Envelope{}, invalid(err)
		}
	}
	switch {
	case d.End() != nil:
		return rtm.Envelope{}, invalid(wire.ErrExtra)
	case !seen.action:
		return rtm.Envelope{}, invalid(errors.New("PDU has no action"))
	case !seen.body:
		env.Body = emptyBody
	}
	return env, nil
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

// once records that a PDU key was seen, refusing it the second time.
func once(seen *bool) error {
	if *seen {
		return errors.New("PDU has a key twice")
	}
	*seen = true
	return nil
}

// actionOf reads the action string of a PDU.
func actionOf(item []byte) (string, error) {
	d := wire.NewDecoder(item)
	k, _, err := d.Head()
	if err != nil || k != wire.KindString {
		return "", errors.New("PDU action must be a string")
	}
	return codec.Action(item[d.Offset():]), nil
}

// idOf reads a PDU id, keeping its type: an integer that fits an int64
// or a string.
func idOf(item []byte) (rtm.ID, error) {
	d := wire.NewDecoder(item)
	v, err := d.Value(0)
	switch x := v.(type) {
	case int64:
		return rtm.IntID(x), err
	case string:
		return rtm.StringID(x), err
	}
	return rtm.ID{}, errors.New("PDU id must be an integer or a string")
}

// isMap reports whether an item is a map.
func isMap(item []byte) bool {
	d := wire.NewDecoder(item)
	k, _, err := d.Head()
	return err == nil && k == wire.KindMap
}

// invalid wraps a decoding failure as the invalid_format the shared codec
// reports (RTM has no msgpack error code).
func invalid(err error) *rtm.Error {
	return rtm.Errorf(rtm.CodeInvalidFormat, "%v", err)
}

// encodeError wraps an encoding failure.
func encodeError(what string, err error) error {
	return fmt.Errorf("msgpack: encode %s: %w", what, err)
}

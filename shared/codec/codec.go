// Package codec turns RTM PDUs into WebSocket frames and back, in the three
// encodings Sluice speaks: JSON (text frames, the RTM default), CBOR (RTM's
// binary codec) and msgpack (Sluice's extension, used by its own clients).
//
// Each codec lives in its own subpackage so a client links only the one it
// uses: json.Codec{}, cbor.Codec{} and msgpack.Codec{}, zero-size values
// safe for concurrent use. This package holds the interface and the
// canonical value model they share (Normalize); it imports none of them and
// keeps no registry, so whoever negotiates the WebSocket subprotocol maps
// the name to a codec itself.
//
// A message travels through the edge in the canonical model: nil, bool,
// int64, uint64 (only above math.MaxInt64), float64, string, []byte, []any
// and map[string]any, nested at most MaxDepth deep, with finite floats and
// valid UTF-8 strings. Every codec decodes into it and encodes from it, map
// keys sorted, so a message published in one codec reaches subscribers of
// every codec as the same value; binary becomes a base64 string in JSON.
package codec

import (
	"github.com/sluicehq/sluice/shared/rtm"
)

// Codec encodes and decodes PDUs in one encoding. Implementations are safe
// for concurrent use.
type Codec interface {
	// Name is the WebSocket subprotocol: "json", "cbor" or "msgpack".
	Name() string
	// Binary reports whether frames are binary WebSocket messages.
	Binary() bool
	// Decode splits a frame into action, id and the still-encoded body.
	// A frame that is not a PDU returns an *rtm.Error whose code is the
	// codec's parse error (json_parse_error, cbor_parse_error or
	// invalid_format). Decode never panics.
	Decode(frame []byte) (rtm.Envelope, error)
	// DecodeBody decodes a body from Decode into v, a pointer to a body
	// type of package rtm. Message values are normalized (see rtm). A body
	// of the wrong shape returns an *rtm.Error with code invalid_format.
	DecodeBody(body []byte, v any) error
	// AppendPDU appends the encoding of p to dst.
	AppendPDU(dst []byte, p *rtm.PDU) ([]byte, error)
	// AppendValue appends the encoding of one message value in the
	// canonical model. A value the codec cannot carry (NaN in JSON, a map
	// with non-string keys) is an *rtm.Error with code invalid_format.
	AppendValue(dst []byte, v any) ([]byte, error)
	// AppendData appends an rtm/subscription/data PDU whose messages are
	// already encoded in this codec (by AppendValue). It is the fan-out's
	// hot path and does not allocate.
	AppendData(dst []byte, subscriptionID string, pos rtm.Position, messages [][]byte) []byte
}

// Data is an rtm/subscription/data push as a DataDecoder reads it.
type Data struct {
	SubscriptionID string
	Position       rtm.Position
	Messages       []any
}

// DataDecoder is implemented by codecs with a one-pass reader for the PDU
// a subscriber receives most: rtm/subscription/data without id. It saves
// decoding the frame twice (Decode, then DecodeBody) and the strings of
// the id and position.
//
// DecodeData reads frame into d and reports true only when Decode and
// DecodeBody into a zero rtm.SubscriptionData would succeed and give the
// same subscription id and messages, and a position that parses to
// d.Position. For any other frame (another PDU, one with an id, unusual
// keys or encodings, an error) it reports false, and the caller decodes
// the frame with Decode and DecodeBody. d.SubscriptionID is kept, without
// allocating, when the frame names the same subscription.
type DataDecoder interface {
	DecodeData(frame []byte, d *Data) bool
}

// ValueDecoder is implemented by codecs that read back one message value
// as AppendValue wrote it, without a PDU around it: the edge's stored
// payloads hold each message so, in msgpack, and a reader of another codec
// gets it transcoded (decoded by the carrier's ValueDecoder and encoded by
// its codec's AppendValue).
//
// DecodeValue returns the value in the canonical model. An encoding that
// is not exactly one valid value, or one the model has no room for, is an
// *rtm.Error with code invalid_format.
type ValueDecoder interface {
	DecodeValue(b []byte) (any, error)
}

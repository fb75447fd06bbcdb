// Package msgpack is Sluice's msgpack codec, an extension to RTM used by its
// own clients: the one msgpack codec of the edge, the native Go client and
// the browser client (sluice.wasm), with the `json` struct tags of package
// rtm as field names.
//
// Every frame and body is checked in one pass before anything trusts it:
// lengths must fit the data (so a forged length cannot make a decoder
// allocate), strings must be valid UTF-8, nesting is limited to
// wire.MaxNesting levels and extension types are refused. RTM has no
// msgpack error code, so every failure is invalid_format, its reason
// worded by package rtm. Messages are written by hand from the canonical
// value model (map keys sorted, integers in their shortest form, floats
// as 64-bit floats).
//
// # One decoder, two encoders
//
// Every build decodes alike, with the same code on both sides of a
// connection and without the msgpack library: splitting and checking a
// frame (Decode, scan.go), reading a body into the struct of package rtm
// its type names (DecodeBody: decode.go, with a table of fields for each
// body type in bodies.go) and reading one message value (DecodeValue).
// Package wire holds the format itself (type bytes, lengths, the scanner,
// the value decoder and the appenders), which edge/view reads too.
//
// What differs by build is how the bodies are written that
// codec.AppendBody does not write by hand (AppendPDU). Everywhere but in
// the browser (library.go) they go through the msgpack library,
// github.com/vmihailenco/msgpack/v5, which maps structs by reflection. In
// the browser (tail_js.go), which writes only the requests it sends, each
// is written field by field (requests.go), byte for byte as the library
// writes it: the library would cost sluice.wasm about 210 KB gzipped. The
// Go client reads a data push in one pass besides (DecodeData, push.go).
package msgpack

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Codec is the msgpack codec. The zero value is ready to use and safe for
// concurrent use.
type Codec struct{}

var _ codec.Codec = Codec{}

// Name returns "msgpack", the WebSocket subprotocol.
func (Codec) Name() string { return "msgpack" }

// Binary reports true: msgpack PDUs travel in binary frames.
func (Codec) Binary() bool { return true }

// Decode splits a frame into action, id and the raw msgpack of its body,
// which aliases frame. A frame that is not one valid msgpack item within the
// limits, or is not a PDU (not a map, a key that is not a string or is given
// twice, a missing or non-string action, an id that is not an integer or a
// string, a body that is not a map), is invalid_format. An absent body
// decodes as an empty map.
func (Codec) Decode(frame []byte) (rtm.Envelope, error) {
	return decodeEnvelope(frame)
}

// DecodeBody decodes a body into v, a non-nil pointer to a body type of
// package rtm (or to an rtm.BodyKeys, a map[string]any or an any), in
// one pass and with its message values in the canonical model. A body
// that is not valid msgpack or does not fit v is invalid_format with a
// reason of package rtm (see decode.go for which comes first); any other
// type of v is an error that is not an *rtm.Error.
func (Codec) DecodeBody(body []byte, v any) error {
	return decodeBody(body, v)
}

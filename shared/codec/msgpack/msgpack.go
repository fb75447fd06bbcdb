// Package msgpack is Sluice's msgpack codec, an extension to RTM used by its
// own clients: the one msgpack codec of the edge, the native Go client and
// the browser client (sluice.wasm), with the `json` struct tags of package
// rtm as field names.
//
// Every frame and body is checked in one pass (package wire's Scanner)
// before anything trusts it: lengths must fit the data (so a forged length
// cannot make a decoder allocate), strings must be valid UTF-8, nesting is
// limited to wire.MaxNesting levels and extension types are refused. RTM has
// no msgpack error code, so every failure is invalid_format. Messages are
// written by hand from the canonical value model (map keys sorted, integers
// in their shortest form, floats as 64-bit floats).
//
// # One codec, two tails
//
// What every build does alike is library-free and the same code on both
// sides of a connection: splitting and checking a frame (Decode, scan.go),
// the start of every PDU and its checks (AppendPDU), message values
// (AppendValue, DecodeValue) and data pushes (AppendData). Package wire
// holds the format itself (type bytes, lengths, the scanner, the value
// decoder and the appenders), which edge/view reads too.
//
// What differs by build is the tail: how bodies map onto the structs of
// package rtm, behind decodeBody and appendBody.
//
//   - Everywhere but in the browser (library.go), the bodies decoded most
//     take the fast paths of fast.go, read with wire.Decoder: each data
//     push a client receives (rtm.SubscriptionData), each publish the edge
//     receives (rtm.PublishBody, options included) and each acknowledgment
//     (rtm.PositionBody); a client reads a data push in one pass
//     (DecodeData, push.go); the bodies with message values and the
//     acknowledgments are written by hand (codec.AppendBody). The rest, a
//     few bodies a second each of another struct (subscribe, handshake,
//     authenticate, replies), goes to the msgpack library,
//     github.com/vmihailenco/msgpack/v5, which maps structs by reflection.
//     It stays for them because the edge's answers to a malformed body
//     (the reason of an RTM error PDU) must stay what they are for every
//     input, and the library defines them: the fast paths mirror its
//     error tiers (see decodeLibraryBody), and FuzzDecodeBodyFastPath
//     checks them against it.
//   - In the browser (tail_js.go), every body goes through a type switch
//     over the bodies a client sends (requests.go, which writes them byte
//     for byte as the library does) and receives (mapped.go, which maps
//     them from the value model). The library would cost sluice.wasm about
//     210 KB gzipped and mapping structs by reflection another 30 KB, over
//     a budget of 1 MB; the fast paths, which reproduce the library's
//     error tiers for the edge's sake, another 8 KB, and DecodeData 1.3 KB.
//     These files build everywhere and are tested natively against the
//     library's tail (the tests' Browser codec, FuzzDecodeBrowser).
//
// So a frame splits into the same envelope, and a body both tails accept
// decodes to the same struct, on both sides; the browser words its own
// refusals of a body, which it sees only for frames no edge sends.
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

// DecodeBody decodes a body into v, a pointer to a body type of package rtm
// (or to a map[string]any or an any), and normalizes its message values. A
// body that is not valid msgpack or has the wrong shape is invalid_format.
//
// Everywhere but in the browser, the bodies decoded most
// (rtm.SubscriptionData, rtm.PublishBody and rtm.PositionBody) take a fast
// path (fast.go), which gives the same result as the library for every
// body, and the others go to the library; in the browser every body is
// mapped from the value model (mapped.go; see the package doc).
func (Codec) DecodeBody(body []byte, v any) error {
	return decodeBody(body, v)
}

package payload

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
)

// NumCodecs is how many codecs the edge speaks.
const NumCodecs = 3

// codecs are the codecs the edge speaks, in payload order. JSON comes first:
// it is the RTM default, used when the client asks for no subprotocol.
var codecs = [NumCodecs]codec.Codec{json.Codec{}, cbor.Codec{}, msgpack.Codec{}}

// JSON is the index of JSON in the codecs: the server API's codec.
const JSON = 0

// Carrier is the index of msgpack, the encoding every stored payload
// holds (see payload.go).
const Carrier = 2

// carrierValues reads the carrier's encoding of a message back, to
// transcode it (see payload.go).
var carrierValues = codecs[Carrier].(codec.ValueDecoder)

// names are the codecs' names, in the same order.
var names = func() []string {
	ns := make([]string, len(codecs))
	for i, c := range codecs {
		ns[i] = c.Name()
	}
	return ns
}()

// Names returns the codecs' names, in index order: the WebSocket
// subprotocols the edge accepts, and the order of per-codec counters.
func Names() []string { return append([]string(nil), names...) }

// Codec returns the codec at index i.
func Codec(i int) codec.Codec { return codecs[i] }

// CodecFor returns the codec of a negotiated subprotocol and its index;
// none means JSON.
func CodecFor(subprotocol string) (codec.Codec, int) {
	for i, c := range codecs {
		if c.Name() == subprotocol {
			return c, i
		}
	}
	return codecs[JSON], JSON
}

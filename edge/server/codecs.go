package server

import (
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
)

const numCodecs = 3

// codecs are the codecs the edge speaks, in payload order. JSON comes first:
// it is the RTM default, used when the client asks for no subprotocol.
var codecs = [numCodecs]codec.Codec{json.Codec{}, cbor.Codec{}, msgpack.Codec{}}

// carrier is the index in codecs of msgpack, the encoding every stored
// payload holds (see payload.go).
const carrier = 2

// carrierValues reads the carrier's encoding of a message back, to
// transcode it (see payload.go).
var carrierValues = codecs[carrier].(codec.ValueDecoder)

// codecNames are the WebSocket subprotocols the edge accepts: the codecs'
// names, in the same order.
var codecNames = func() []string {
	names := make([]string, len(codecs))
	for i, c := range codecs {
		names[i] = c.Name()
	}
	return names
}()

// codecFor returns the codec of a negotiated subprotocol and its index;
// none means JSON.
func codecFor(subprotocol string) (codec.Codec, int) {
	for i, c := range codecs {
		if c.Name() == subprotocol {
			return c, i
		}
	}
	return codecs[0], 0
}

// Package wire is the msgpack format as Sluice speaks it: appending values
// in their canonical form, reading and checking items (type bytes, lengths
// against the data, UTF-8, nesting), and decoding them into the canonical
// value model (Decoder). Sluice's msgpack codec (shared/codec/msgpack)
// builds on it on every build, the browser's too, and so does the edge's
// view engine (edge/view), which reads stored messages without decoding
// them whole.
//
// The browser build links it without the msgpack library, which would
// cost sluice.wasm about 210 KB gzipped. So besides shared/codec and
// shared/rtm, which the browser links anyway, this package imports only
// small standard packages (no msgpack library, reflect, sort or
// encoding/json) and builds for js/wasm.
//
// Its errors read "msgpack: <why>", and each says why as a flaw of
// package rtm, which the codecs put in the reason of an invalid_format a
// client sees (rtm.NotValid): never this package's own text.
package wire

import (
	"errors"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Error is why an item is not valid msgpack, or not msgpack a codec
// accepts.
type Error struct {
	// Flaw words it for a client.
	Flaw rtm.Flaw
}

func (e *Error) Error() string { return "msgpack: " + string(e.Flaw) }

// Why an item is not valid msgpack, or not msgpack a codec accepts.
var (
	ErrTruncated = &Error{rtm.FlawTruncated}
	ErrReserved  = &Error{rtm.FlawReserved}
	ErrExt       = &Error{rtm.FlawExtension}
	ErrDeep      = &Error{rtm.FlawDeep}
	ErrUTF8      = &Error{rtm.FlawUTF8}
	ErrExtra     = &Error{rtm.FlawExtra}
)

// ErrKey refuses a map key that is not a string, binary or nil: valid
// msgpack, but a fault of the body or the message it is in
// (rtm.BodyKeyType, rtm.MessageKeyType), which its reader tells apart.
var ErrKey = errors.New("msgpack: map keys must be strings")

// FlawOf returns the flaw of err, an *Error, or rtm.FlawUnknown.
func FlawOf(err error) rtm.Flaw {
	var e *Error
	if errors.As(err, &e) {
		return e.Flaw
	}
	return rtm.FlawUnknown
}

// MaxNesting is how deeply a codec lets arrays and maps nest in a frame. It
// leaves room above codec.MaxDepth for the PDU map, the body map and the
// messages array, so that a message nested just too deep gets through the
// scan and is refused by normalization with a precise reason.
const MaxNesting = codec.MaxDepth + 8

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
// Its errors read "msgpack: <why>": they name the format, not this
// package, because the codecs put them in the reason of an invalid_format
// a client sees.
package wire

import (
	"errors"

	"github.com/sluicehq/sluice/shared/codec"
)

// Why an item is not valid msgpack, or not msgpack a codec accepts.
var (
	ErrTruncated = errors.New("msgpack: truncated")
	ErrReserved  = errors.New("msgpack: reserved type byte 0xc1")
	ErrExt       = errors.New("msgpack: extension types are not supported")
	ErrDeep      = errors.New("msgpack: nested too deeply")
	ErrUTF8      = errors.New("msgpack: string is not valid UTF-8")
	ErrExtra     = errors.New("msgpack: extra data after the item")
	ErrKey       = errors.New("msgpack: map keys must be strings")
)

// MaxNesting is how deeply a codec lets arrays and maps nest in a frame. It
// leaves room above codec.MaxDepth for the PDU map, the body map and the
// messages array, so that a message nested just too deep gets through the
// scan and is refused by normalization with a precise reason.
const MaxNesting = codec.MaxDepth + 8

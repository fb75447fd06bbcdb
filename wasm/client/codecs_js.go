//go:build js

package client

import (
	"strconv"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// codecByName returns the codec for Options.Codec. The browser build
// speaks msgpack only, through shared/codec/msgpack, the edge's codec,
// which js builds link without the msgpack library (see its package doc):
// the CBOR library (with math/big), the JSON codec (with encoding/json)
// and the msgpack library would together add about a megabyte to
// sluice.wasm, and msgpack carries the whole data model.
func codecByName(name string) (codec.Codec, error) {
	if name == "msgpack" {
		return msgpack.Codec{}, nil
	}
	return nil, errtext.Kind(ErrOptions, "codec "+strconv.Quote(name)+": the browser build speaks msgpack only")
}

// rtmDefaultCodec is nil in the browser build: an edge that chose no
// subprotocol would speak JSON, which this build leaves out.
func rtmDefaultCodec() codec.Codec { return nil }

// messageValue checks that a message is a value of the data model; the
// JavaScript layer converts every JavaScript value into one, so the
// native client's JSON fallback for Go types is left out.
func messageValue(v any) (any, error) {
	if !modelValue(v) {
		// No %T: naming a Go type takes fmt and reflect, which this
		// build leaves out, for a value only a Go caller could pass.
		return nil, errtext.Kind(ErrOptions, "a message is not a value of the data model")
	}
	return v, nil
}

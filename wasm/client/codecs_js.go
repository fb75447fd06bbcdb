//go:build js

package client

import (
	"fmt"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
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
	return nil, fmt.Errorf("%w: codec %q: the browser build speaks msgpack only", ErrOptions, name)
}

// rtmDefaultCodec is nil in the browser build: an edge that chose no
// subprotocol would speak JSON, which this build leaves out.
func rtmDefaultCodec() codec.Codec { return nil }

// messageValue checks that a message is a value of the data model; the
// JavaScript layer converts every JavaScript value into one, so the
// native client's JSON fallback for Go types is left out.
func messageValue(v any) (any, error) {
	if !modelValue(v) {
		return nil, fmt.Errorf("%w: a message of type %T is not a value of the data model", ErrOptions, v)
	}
	return v, nil
}

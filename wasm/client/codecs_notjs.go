//go:build !js

package client

import (
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/shared/codec"
	cborcodec "github.com/sluicehq/sluice/shared/codec/cbor"
	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	msgpackcodec "github.com/sluicehq/sluice/shared/codec/msgpack"
)

// codecByName returns the codec for Options.Codec.
func codecByName(name string) (codec.Codec, error) {
	switch name {
	case "msgpack":
		return msgpackcodec.Codec{}, nil
	case "json":
		return jsoncodec.Codec{}, nil
	case "cbor":
		return cborcodec.Codec{}, nil
	}
	return nil, fmt.Errorf("%w: unknown codec %q (want msgpack, json or cbor)", ErrOptions, name)
}

// rtmDefaultCodec is the codec of a connection for which the edge chose
// no subprotocol: JSON, the RTM default.
func rtmDefaultCodec() codec.Codec { return jsoncodec.Codec{} }

// messageValue prepares a message for the codecs, which carry the
// canonical data model (nil, bool, numbers, string, []byte, []any,
// map[string]any). Other Go values (structs, typed slices and maps,
// json.Marshalers) are converted to their JSON form first, so a Go caller
// can publish its own types with their json tags.
func messageValue(v any) (any, error) {
	if modelValue(v) {
		return v, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("client: message of type %T: %w", v, err)
	}
	var out any
	if err := (jsoncodec.Codec{}).DecodeBody(b, &out); err != nil {
		return nil, fmt.Errorf("client: message of type %T: %w", v, err)
	}
	return out, nil
}

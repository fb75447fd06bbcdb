//go:build !js

package msgpack

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
)

// This file is how every build but the browser's writes the bodies
// codec.AppendBody does not write by hand: through the msgpack library,
// github.com/vmihailenco/msgpack/v5, with the `json` tags of package rtm.
// The browser writes the requests it sends field by field instead
// (requests.go, tail_js.go).

// appendBody appends a body for AppendPDU: by hand (codec.AppendBody),
// or through the library.
func appendBody(dst []byte, body any) ([]byte, error) {
	return codec.AppendBody(dst, body, wire.Primitives{}, appendLibraryBody)
}

// appendLibraryBody appends a body that carries no message values through
// the library with its `json` tags, or nothing for a nil pointer.
func appendLibraryBody(dst []byte, body any) ([]byte, error) {
	start := len(dst)
	dst, err := appendLibrary(dst, body)
	if err != nil {
		return dst[:start], fmt.Errorf("msgpack: encode %T body: %w", body, err)
	}
	if len(dst)-start == 1 && dst[start] == nilByte {
		return dst[:start], nil
	}
	return dst, nil
}

// nilByte is what the library writes for a nil pointer body.
const nilByte = 0xc0

// encoder is a pooled library encoder writing to a reusable buffer.
type encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

// maxPooledBuffer keeps an encoder that wrote one huge body from pinning
// its buffer forever.
const maxPooledBuffer = 64 << 10

var encoders = sync.Pool{New: func() any {
	e := new(encoder)
	e.enc = msgpack.NewEncoder(&e.buf)
	e.enc.SetCustomStructTag("json")
	e.enc.UseCompactInts(true)
	return e
}}

// appendLibrary appends v encoded by the library.
func appendLibrary(dst []byte, v any) ([]byte, error) {
	e := encoders.Get().(*encoder)
	e.buf.Reset()
	err := e.enc.Encode(v)
	if err == nil {
		dst = append(dst, e.buf.Bytes()...)
	}
	if e.buf.Cap() <= maxPooledBuffer {
		encoders.Put(e)
	}
	return dst, err
}

//go:build !js

package msgpack

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
	"github.com/sluicehq/sluice/shared/rtm"
)

// This file is the tail of the codec on every build but the browser's
// (see the package doc): the fast paths (fast.go), then the msgpack
// library, for DecodeBody, and codec.AppendBody, then the library, for
// AppendPDU. The browser's is tail_js.go.

// decodeBody is DecodeBody: the fast path of v's type if it has one, the
// library otherwise.
func decodeBody(body []byte, v any) error {
	err := decodeFast(body, v)
	if errors.Is(err, errLibrary) {
		err = decodeLibraryBody(body, v)
	}
	return shaped(body, v, err)
}

// shaped gives a body of the wrong shape the reason every codec gives
// (codec.ShapeError), from the body decoded into the canonical model: the
// fast paths and the library tell only that the shape is wrong.
func shaped(body []byte, v any, err error) error {
	if e, ok := err.(*rtm.Error); !ok || e != errWrongShape {
		return err
	}
	var g any
	if decodeLibraryBody(body, &g) == nil {
		if e := codec.ShapeError(g, v); e != nil {
			return e
		}
	}
	return err
}

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

// decodeLibraryBody is the library path of DecodeBody. It checks a body in
// tiers, each reporting the first failure it finds: (1) the scan of the
// whole body, (2) a body that is not a map, (3) whatever the library
// fails on, which is reported as one reason (a field, or a map key in a
// message, of the wrong type), (4) string fields the library took from
// binary, which must be valid UTF-8, and (5) normalization.
func decodeLibraryBody(body []byte, v any) error {
	binary, err := scan(body)
	if err != nil {
		return malformed("body", err)
	}
	// The library would read an array into a struct field by field; a body
	// is a map in every codec.
	if _, isAny := v.(*any); !isAny && !wire.IsMap(body) {
		return notMap()
	}
	if err := decodeLibrary(body, v); err != nil {
		return wrongShape()
	}
	// The library turns binary into a string field without complaint; only
	// then can a string of the body be invalid UTF-8.
	if binary && !validStrings(reflect.ValueOf(v)) {
		return badStrings()
	}
	return codec.NormalizeBody(v)
}

// decoder is a pooled library decoder reading from a reusable reader.
type decoder struct {
	r   bytes.Reader
	dec *msgpack.Decoder
}

var decoders = sync.Pool{New: func() any {
	d := new(decoder)
	d.dec = msgpack.NewDecoder(&d.r)
	d.dec.SetCustomStructTag("json")
	return d
}}

// errLibraryPanic reports a body the library panicked on.
var errLibraryPanic = errors.New("msgpack: the library panicked on the body")

// decodeLibrary decodes a checked body into v with a pooled library
// decoder. The library panics on some bodies that passed the check: a key
// given twice whose first value it stored in an interface field, such as
// {"message":1,"message":2} into rtm.PublishBody, because it decodes the
// second value into the first, which is not addressable. Any client could
// send one, so a panic is an error here, not a crash of the edge; the
// decoder it left in an unknown state is not pooled again.
func decodeLibrary(body []byte, v any) (err error) {
	d := decoders.Get().(*decoder)
	defer func() {
		if recover() != nil {
			err = errLibraryPanic
			return
		}
		d.r.Reset(nil)
		decoders.Put(d)
	}()
	d.r.Reset(body)
	d.dec.ResetReader(&d.r) // keeps the struct tag set in newDecoder
	return d.dec.Decode(v)
}

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

// validStrings reports whether every string field reachable through the
// pointers and structs of v is valid UTF-8. Message values are checked by
// normalization instead.
func validStrings(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return v.IsNil() || validStrings(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !validStrings(v.Field(i)) {
				return false
			}
		}
	case reflect.String:
		return utf8.ValidString(v.String())
	}
	return true
}

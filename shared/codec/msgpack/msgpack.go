// Package msgpack is Sluice's msgpack codec, an extension to RTM used by its
// own clients, built on github.com/vmihailenco/msgpack/v5 with the `json`
// struct tags of package rtm as field names.
//
// Every frame and body is checked in one pass (package wire's Scanner)
// before the library sees it: lengths must fit the data (so a forged length
// cannot make the library allocate), strings must be valid UTF-8, nesting is
// limited to wire.MaxNesting levels and extension types are refused. RTM has no
// msgpack error code, so every failure is invalid_format. The bodies decoded
// most skip the library: wire.Decoder reads them, checking as it goes, to
// the same result (fast.go). Messages are written by hand from the
// canonical value model (map keys sorted, integers in their shortest form,
// floats as 64-bit floats).
package msgpack

import (
	"bytes"
	"errors"
	"reflect"
	"sync"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/msgpack/wire"
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
// The bodies decoded most (rtm.SubscriptionData, rtm.PublishBody and
// rtm.PositionBody) take a fast path without the library (fast.go), which
// gives the same result as the library path for every body.
func (Codec) DecodeBody(body []byte, v any) error {
	err := decodeFast(body, v)
	if errors.Is(err, errLibrary) {
		err = decodeBody(body, v)
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
	if decodeBody(body, &g) == nil {
		if e := codec.ShapeError(g, v); e != nil {
			return e
		}
	}
	return err
}

// decodeBody is the library path of DecodeBody. It checks a body in
// tiers, each reporting the first failure it finds: (1) the scan of the
// whole body, (2) a body that is not a map, (3) whatever the library
// fails on, which is reported as one reason (a field, or a map key in a
// message, of the wrong type), (4) string fields the library took from
// binary, which must be valid UTF-8, and (5) normalization.
func decodeBody(body []byte, v any) error {
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

// scan checks that a body is one valid msgpack item within the limits of
// package wire, and reports whether it holds binary.
func scan(body []byte) (binary bool, err error) {
	var s wire.Scanner
	end, err := s.Skip(body, 0, 0)
	if err == nil && end != len(body) {
		err = wire.ErrExtra
	}
	return s.Binary, err
}

// notMap, wrongShape and badStrings are the reasons of tiers 2 to 4 of
// decodeBody.
func notMap() *rtm.Error { return codec.Invalid("body must be a map") }

func wrongShape() *rtm.Error { return errWrongShape }

// errWrongShape is the one error of tier 3, which shaped looks for.
var errWrongShape = codec.ShapeFallback()

func badStrings() *rtm.Error { return codec.Invalid("body strings must be valid UTF-8") }

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

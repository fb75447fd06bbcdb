// Package payload is the form in which the edge stores a message: encoded
// once per codec when it is published, never once per subscriber. A
// store frame's data is a payload that holds the message in the codecs
// that may read it, so each sender splices the bytes of its connection's
// codec into its data PDU.
//
// Layout: one uint32 length per codec (little endian, in codec index
// order), then the encodings back to back. Length 0 means absent (no
// value encodes to nothing in any codec).
//
//	+------+------+------+-----------+-----------+
//	| lenJ | lenC | lenM | JSON ...  | msgpack...|   (lenC = 0: no CBOR)
//	+------+------+------+-----------+-----------+
//
// A payload holds msgpack, the carrier, always; the publisher's codec;
// and every codec in use when it was published (Usage): with a
// connection open, or whose last connection closed less than Linger
// before, so that clients reconnecting after a drop find what was
// published meanwhile in their codec. An app whose clients all speak one
// codec so keeps one or two encodings of its history instead of three. A
// reader in a codec the payload lacks gets the message decoded from
// msgpack and encoded in its codec: one allocation per message and
// reader, on a path that only history published before the codec came in
// use takes.
package payload

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrCorrupt is a payload whose header lies, or whose carrier is missing
// or broken.
var ErrCorrupt = errors.New("payload: corrupt payload")

const headerSize = 4 * NumCodecs

// Mask is a set of codec indexes, bit i for the codec at index i.
type Mask uint8

// AllCodecs has every codec.
const AllCodecs = Mask(1<<NumCodecs - 1)

// Encode appends the payload of value v, encoded in the codecs of want
// (which has the carrier), to dst. size is the length of v in the codec
// at index in, which the max-message check uses; want has in.
func Encode(dst []byte, v any, in int, want Mask) (out []byte, size int, err error) {
	start := len(dst)
	dst = append(dst, make([]byte, headerSize)...)
	for i, c := range codecs {
		if want&(1<<i) == 0 {
			continue
		}
		before := len(dst)
		dst, err = c.AppendValue(dst, v)
		if err != nil {
			return dst[:start], 0, err
		}
		n := len(dst) - before
		binary.LittleEndian.PutUint32(dst[start+4*i:], uint32(n))
		if i == in {
			size = n
		}
	}
	return dst, size, nil
}

// In returns the message of payload p in the codec at index i: without
// copying when p holds it, else transcoded from the carrier into a new
// slice.
func In(p []byte, i int) ([]byte, error) {
	b, err := Encoding(p, i)
	if err != nil || len(b) > 0 {
		return b, err
	}
	return transcode(p, i)
}

// Encoding returns the encoding of codec i inside a payload, empty if
// absent.
func Encoding(p []byte, i int) ([]byte, error) {
	if len(p) < headerSize {
		return nil, ErrCorrupt
	}
	off := headerSize
	for j := 0; j < i; j++ {
		off += int(binary.LittleEndian.Uint32(p[4*j:]))
	}
	n := int(binary.LittleEndian.Uint32(p[4*i:]))
	if off+n > len(p) {
		return nil, ErrCorrupt
	}
	return p[off : off+n], nil
}

// transcode encodes in codec i the message a payload carries in msgpack.
// The value was encoded from the canonical model, so it decodes back to
// the same value, which every codec can carry.
func transcode(p []byte, i int) ([]byte, error) {
	m, err := Encoding(p, Carrier)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, ErrCorrupt
	}
	return Transcode(m, i)
}

// Transcode encodes in codec i a value in canonical msgpack.
func Transcode(m []byte, i int) ([]byte, error) {
	v, err := carrierValues.DecodeValue(m)
	if err != nil {
		return nil, fmt.Errorf("%w: carrier: %w", ErrCorrupt, err)
	}
	return codecs[i].AppendValue(nil, v)
}

// Null is the payload of a null message (rtm/delete), in every codec.
var Null = func() []byte {
	p, _, err := Encode(nil, nil, Carrier, AllCodecs)
	if err != nil {
		panic("payload: cannot encode null: " + err.Error())
	}
	return p
}()

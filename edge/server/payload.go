package server

import (
	"encoding/binary"
	"errors"
)

// A stored message is encoded once per codec when it is published, never
// once per subscriber: the store frame's data is a payload that holds the
// message in every codec the edge speaks, so each sender splices the bytes
// of its connection's codec into its data PDU.
//
// Layout: one uint32 length per codec (little endian, in codec index
// order), then the encodings back to back.
//
//	+------+------+------+-----------+-----------+-----------+
//	| lenJ | lenC | lenM | JSON ...  | CBOR ...  | msgpack...|
//	+------+------+------+-----------+-----------+-----------+

var errPayload = errors.New("server: corrupt payload")

const payloadHeader = 4 * numCodecs

// encodePayload appends the payload of value v to dst. size is the length
// of v in the codec at index in, which the max-message check uses.
func encodePayload(dst []byte, v any, in int) (out []byte, size int, err error) {
	start := len(dst)
	dst = append(dst, make([]byte, payloadHeader)...)
	for i, c := range codecs {
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

// payloadFor returns the encoding for the codec at index i inside a
// payload, without copying.
func payloadFor(p []byte, i int) ([]byte, error) {
	if len(p) < payloadHeader {
		return nil, errPayload
	}
	off := payloadHeader
	for j := 0; j < i; j++ {
		off += int(binary.LittleEndian.Uint32(p[4*j:]))
	}
	n := int(binary.LittleEndian.Uint32(p[4*i:]))
	if off+n > len(p) {
		return nil, errPayload
	}
	return p[off : off+n], nil
}

// nullPayload is the payload of a null message (rtm/delete).
var nullPayload = func() []byte {
	p, _, err := encodePayload(nil, nil, 0)
	if err != nil {
		panic("server: cannot encode null: " + err.Error())
	}
	return p
}()

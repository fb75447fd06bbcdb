package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// A stored message is encoded once per codec when it is published, never
// once per subscriber: the store frame's data is a payload that holds the
// message in the codecs that may read it, so each sender splices the
// bytes of its connection's codec into its data PDU.
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
// and every codec in use when it was published: with a connection open,
// or whose last connection closed less than codecLinger before, so that
// clients reconnecting after a drop find what was published meanwhile in
// their codec. An app whose clients all speak one codec so
// keeps one or two encodings of its history instead of three. A reader in
// a codec the payload lacks gets the message decoded from msgpack and
// encoded in its codec: one allocation per message and reader, on a path
// that only history published before the codec came in use takes.

var errPayload = errors.New("server: corrupt payload")

const payloadHeader = 4 * numCodecs

// codecMask is a set of codec indexes, bit i for codecs[i].
type codecMask uint8

// allCodecs has every codec.
const allCodecs = codecMask(1<<numCodecs - 1)

// codecLinger is how long a codec is still encoded after its last
// connection closed: longer than clients dropped together take to come
// back (their reconnect backoff is seconds).
const codecLinger = int64(time.Minute)

// codecOpened counts a connection of the codec at index i.
func (s *Server) codecOpened(i int) { s.counters.connections[i].Add(1) }

// codecClosed uncounts it, noting when the codec's last one closed.
func (s *Server) codecClosed(i int) {
	if s.counters.connections[i].Add(-1) == 0 {
		s.codecGone[i].Store(s.store.Now())
	}
}

// payloadCodecs returns the codecs to encode a message published in the
// codec at index in: the carrier, in, and every codec in use.
func (s *Server) payloadCodecs(in int) codecMask {
	m := codecMask(1)<<carrier | codecMask(1)<<in
	var now int64 // read once, if a codec without connections needs it
	for i := range numCodecs {
		if s.counters.connections[i].Load() > 0 {
			m |= codecMask(1) << i
			continue
		}
		if gone := s.codecGone[i].Load(); gone != 0 {
			if now == 0 {
				now = s.store.Now()
			}
			if now-gone < codecLinger {
				m |= codecMask(1) << i
			}
		}
	}
	return m
}

// encodePayload appends the payload of value v, encoded in the codecs of
// want (which has the carrier), to dst. size is the length of v in the
// codec at index in, which the max-message check uses; want has in.
func encodePayload(dst []byte, v any, in int, want codecMask) (out []byte, size int, err error) {
	start := len(dst)
	dst = append(dst, make([]byte, payloadHeader)...)
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

// payloadFor returns the encoding for the codec at index i of a payload:
// without copying when the payload holds it, else transcoded from the
// carrier into a new slice.
func payloadFor(p []byte, i int) ([]byte, error) {
	b, err := encodingAt(p, i)
	if err != nil || len(b) > 0 {
		return b, err
	}
	return transcode(p, i)
}

// encodingAt returns the encoding of codec i inside a payload, empty if
// absent.
func encodingAt(p []byte, i int) ([]byte, error) {
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

// transcode encodes in codec i the message a payload carries in msgpack.
// The value was encoded from the canonical model, so it decodes back to
// the same value, which every codec can carry.
func transcode(p []byte, i int) ([]byte, error) {
	m, err := encodingAt(p, carrier)
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, errPayload
	}
	return transcodeCarrier(m, i)
}

// transcodeCarrier encodes in codec i a value in canonical msgpack.
func transcodeCarrier(m []byte, i int) ([]byte, error) {
	v, err := carrierValues.DecodeValue(m)
	if err != nil {
		return nil, fmt.Errorf("%w: carrier: %w", errPayload, err)
	}
	return codecs[i].AppendValue(nil, v)
}

// nullPayload is the payload of a null message (rtm/delete), in every
// codec.
var nullPayload = func() []byte {
	p, _, err := encodePayload(nil, nil, carrier, allCodecs)
	if err != nil {
		panic("server: cannot encode null: " + err.Error())
	}
	return p
}()

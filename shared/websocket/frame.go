//go:build !js

package websocket

import (
	"encoding/binary"
	"math/bits"
	"time"
)

// Opcode is a frame's type (RFC 6455 section 5.2).
type Opcode byte

// The opcodes.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

func (op Opcode) control() bool { return op&0x8 != 0 }

const (
	finBit  = 0x80
	rsvBits = 0x70
	// rsv1Bit marks the first frame of a compressed message
	// (permessage-deflate, RFC 7692 section 6).
	rsv1Bit = 0x40
	maskBit = 0x80

	// MaxHeader is the longest frame header: 2 bytes, an 8-byte length
	// and a 4-byte masking key.
	MaxHeader = 14
	// maxControlPayload is the largest payload of a control frame.
	maxControlPayload = 125
)

// appendHeader appends a final frame's header for a payload of n bytes,
// with the reserved bits rsv; masked frames (a client's) carry key.
func appendHeader(dst []byte, op Opcode, rsv byte, n int, masked bool, key uint32) []byte {
	var mb byte
	if masked {
		mb = maskBit
	}
	dst = append(dst, finBit|rsv|byte(op))
	switch {
	case n <= 125:
		dst = append(dst, mb|byte(n))
	case n <= 0xFFFF:
		dst = append(dst, mb|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, mb|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	if masked {
		dst = binary.LittleEndian.AppendUint32(dst, key)
	}
	return dst
}

// header is a decoded frame header.
type header struct {
	fin    bool
	rsv    byte
	op     Opcode
	masked bool
	key    uint32
	length uint64
}

// mask XORs b in place with the masking key, starting at key position
// pos (0..3), and returns the position after b. The key is the 4 bytes as
// they appear on the wire, read little-endian.
func mask(b []byte, key uint32, pos int) int {
	key = bits.RotateLeft32(key, -8*pos)
	if len(b) >= 8 {
		k := uint64(key)<<32 | uint64(key)
		for len(b) >= 8 {
			v := binary.LittleEndian.Uint64(b)
			binary.LittleEndian.PutUint64(b, v^k)
			b = b[8:]
		}
	}
	for i := range b {
		b[i] ^= byte(key)
		key = bits.RotateLeft32(key, -8)
	}
	return (pos + len(b)) & 3
}

var (
	noDeadline   time.Time
	pastDeadline = time.Unix(1, 0)
)

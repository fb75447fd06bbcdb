package stream

import (
	"encoding/binary"
	"errors"
)

// The WebSocket opcodes a tunnel sees (RFC 6455 section 5.2).
const (
	opText   = 0x1
	opBinary = 0x2
	opClose  = 0x8
	opPing   = 0x9
	opPong   = 0xA
)

// errFragment says the session wrote a fragmented message, which the
// edge never does: its writer frames each PDU whole.
var errFragment = errors.New("stream: fragmented frame from the session")

// frame is one frame the session wrote, as the tunnel parses it.
type frame struct {
	op      byte
	payload []byte // aliases the write's bytes
}

// nextFrame parses the first whole frame of b, unmasked as a server's
// frames are; n is 0 when b holds no whole frame yet.
func nextFrame(b []byte) (f frame, n int, err error) {
	if len(b) < 2 {
		return frame{}, 0, nil
	}
	if b[0]&0x80 == 0 {
		return frame{}, 0, errFragment
	}
	f.op = b[0] & 0x0F
	hl, size := 2, uint64(b[1]&0x7F)
	switch size {
	case 126:
		if len(b) < 4 {
			return frame{}, 0, nil
		}
		hl, size = 4, uint64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		if len(b) < 10 {
			return frame{}, 0, nil
		}
		hl, size = 10, binary.BigEndian.Uint64(b[2:])
	}
	if uint64(len(b)-hl) < size {
		return frame{}, 0, nil
	}
	end := hl + int(size)
	f.payload = b[hl:end]
	return f, end, nil
}

// appendClientFrame appends p as a whole client frame of op: masked, as
// the session's reader requires, with the all-zero key, which leaves the
// payload as it is (the mask protects proxies on a network; this frame
// never leaves the process).
func appendClientFrame(dst []byte, op byte, p []byte) []byte {
	dst = append(dst, 0x80|op)
	switch n := len(p); {
	case n <= 125:
		dst = append(dst, 0x80|byte(n))
	case n <= 0xFFFF:
		dst = append(dst, 0x80|126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0x80|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	dst = append(dst, 0, 0, 0, 0)
	return append(dst, p...)
}

// closePayload is the payload of a close frame with code and no reason.
func closePayload(code int) []byte { return []byte{byte(code >> 8), byte(code)} }

// parseClose reads a close frame's code and reason; 1005 when it has none.
func parseClose(p []byte) (int, string) {
	if len(p) < 2 {
		return 1005, ""
	}
	return int(binary.BigEndian.Uint16(p)), string(p[2:])
}

// AppendRequest appends the text PDU p as the client frame a session
// reads: for the requests the edge makes on a client's behalf.
func AppendRequest(dst, p []byte) []byte { return appendClientFrame(dst, opText, p) }

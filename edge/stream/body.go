package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// MaxBodyPDUs is the most PDUs one POST may carry.
const MaxBodyPDUs = 256

// Errors of DecodeBody.
var (
	ErrBodyTruncated = errors.New("stream: body ends inside a PDU")
	ErrBodyTooMany   = fmt.Errorf("stream: body holds more than %d PDUs", MaxBodyPDUs)
	ErrPDUTooLarge   = errors.New("stream: PDU larger than the limit")
)

// DecodeBody splits a POST body into the client frames of its PDUs, all
// or none. A text (JSON) body is one PDU per line (empty lines skipped);
// a binary body (cbor, msgpack) is each PDU after its length, 4 bytes
// big-endian. A PDU longer than max is refused here, before the session
// sees any of the body: a WebSocket session would close on such a frame.
// What a PDU says is the session's to judge; a PDU that does not decode
// gets the session's error reply on the stream, as over a WebSocket.
func DecodeBody(body []byte, binaryCodec bool, max int) ([]byte, error) {
	var out []byte
	n := 0
	for len(body) > 0 {
		var p []byte
		if binaryCodec {
			if len(body) < 4 {
				return nil, fmt.Errorf("%w: %d bytes left of a length", ErrBodyTruncated, len(body))
			}
			size := binary.BigEndian.Uint32(body)
			if uint64(size) > uint64(max) {
				return nil, fmt.Errorf("%w: PDU %d is %d bytes, over %d", ErrPDUTooLarge, n, size, max)
			}
			if uint64(len(body)-4) < uint64(size) {
				return nil, fmt.Errorf("%w: PDU %d", ErrBodyTruncated, n)
			}
			p, body = body[4:4+size], body[4+size:]
		} else {
			i := bytes.IndexByte(body, '\n')
			if i < 0 {
				i = len(body)
			}
			p, body = bytes.TrimRight(body[:i], "\r"), body[min(i+1, len(body)):]
			if len(bytes.TrimSpace(p)) == 0 {
				continue
			}
			if len(p) > max {
				return nil, fmt.Errorf("%w: PDU %d is %d bytes, over %d", ErrPDUTooLarge, n, len(p), max)
			}
		}
		if n++; n > MaxBodyPDUs {
			return nil, ErrBodyTooMany
		}
		op := byte(opText)
		if binaryCodec {
			op = opBinary
		}
		out = appendClientFrame(out, op, p)
	}
	return out, nil
}

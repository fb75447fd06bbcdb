package websocket

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// readStep is the least a message buffer grows by while a payload
// arrives: memory follows the bytes received, not what a header claims.
const readStep = 4 << 10

// readPayload appends the next n payload bytes to dst. The buffer grows
// as the bytes arrive, by at most what is already in hand (the message so
// far, or what is buffered), or readStep, at a time, so a header that claims a large frame and a peer
// that then sends little pins little. Unless the payload is already
// buffered (the steady state of small messages, which then pays for no
// deadline), the whole payload must arrive within the frame timeout.
func (c *Conn) readPayload(dst []byte, n int) ([]byte, error) {
	deadline := c.frameTimeout > 0 && c.br.Buffered() < n
	if deadline {
		if err := c.nc.SetReadDeadline(time.Now().Add(c.frameTimeout)); err != nil {
			return dst, fmt.Errorf("websocket read: %w", err)
		}
	}
	for n > 0 {
		if cap(dst) == len(dst) {
			// Bytes already buffered have arrived: room for all of them.
			dst = slices.Grow(dst, min(n, max(readStep, len(dst), c.br.Buffered())))
		}
		k := min(n, cap(dst)-len(dst))
		m, err := io.ReadFull(c.br, dst[len(dst):len(dst)+k])
		dst = dst[:len(dst)+m]
		n -= m
		if err != nil {
			return dst, c.payloadError(err, deadline)
		}
	}
	if deadline {
		if err := c.nc.SetReadDeadline(noDeadline); err != nil {
			return dst, fmt.Errorf("websocket read: %w", err)
		}
	}
	return dst, nil
}

// payloadError is the error of a payload read that failed: a stalled
// frame is closed with a reason saying so, anything else is the network's.
func (c *Conn) payloadError(err error, deadline bool) error {
	if !deadline || !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("websocket read: %w", err)
	}
	// Lifted so that fail can read and drop what the peer still sends
	// while the close handshake runs (bounded by CloseTimeout).
	_ = c.nc.SetReadDeadline(noDeadline)
	return c.fail(StatusPolicyViolation, fmt.Sprintf("frame payload incomplete after %s", c.frameTimeout))
}

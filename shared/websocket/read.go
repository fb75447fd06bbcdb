//go:build !js

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
// far, or what is buffered), or readStep, at a time, so a header that
// claims a large frame and a peer that then sends little pins little.
//
// Unless the payload is already buffered, it must arrive within the frame
// timeout. Setting a deadline costs more than reading the clock, and
// clearing it once more, so the deadline is left set after the payload
// (readRest lifts it if it expires between frames) and moved only when a
// tenth of the timeout has passed since it was set: a payload gets
// between 0.9 and 1 times the timeout.
func (c *Conn) readPayload(dst []byte, n int) ([]byte, error) {
	if c.frameTimeout > 0 && c.br.Buffered() < n {
		now := time.Now()
		if c.readDeadlineSet.IsZero() || now.Sub(c.readDeadlineSet) > c.frameTimeout/10 {
			if err := c.nc.SetReadDeadline(now.Add(c.frameTimeout)); err != nil {
				return dst, fmt.Errorf("websocket read: %w", err)
			}
			c.readDeadlineSet = now
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
			return dst, c.payloadError(midFrame(err))
		}
	}
	return dst, nil
}

// midFrame is the error of a read that needed a frame's next bytes: an
// io.EOF there becomes io.ErrUnexpectedEOF, as io.ReadFull reports a
// partial read, so that a caller tells a peer gone between frames (io.EOF)
// from one that cut a frame off.
func midFrame(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// payloadError is the error of a payload read that failed: a stalled
// payload is closed with a reason saying so, anything else is the
// network's.
func (c *Conn) payloadError(err error) error {
	if c.readDeadlineSet.IsZero() || !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("websocket read: %w", err)
	}
	return c.fail(StatusPolicyViolation, fmt.Sprintf("frame payload incomplete after %s", c.frameTimeout))
}

// readRest reads the rest of a header or a control frame after a read of
// it failed with err. The frame timeout is not theirs (they pin at most a
// few bytes, and an idle connection waits in a header read): the deadline
// a payload left is lifted, and the read goes on.
func (c *Conn) readRest(rest []byte, err error) error {
	for {
		if c.readDeadlineSet.IsZero() || !errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("websocket read: %w", err)
		}
		c.readDeadlineSet = time.Time{}
		if err := c.nc.SetReadDeadline(noDeadline); err != nil {
			return fmt.Errorf("websocket read: %w", err)
		}
		var n int
		if n, err = io.ReadFull(c.br, rest); err == nil {
			return nil
		}
		rest = rest[n:]
	}
}

//go:build !js

package websocket

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
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

// ReadMessage reads the next data message into dst[:0] (grown as needed)
// and returns its type and bytes. It answers pings and the peer's close
// on the way, and inflates a compressed message (permessage-deflate).
// Errors: *CloseError when the peer closed, *ProtocolError when the peer
// broke the protocol (a close frame saying so has been sent; a frame
// stalled past the frame timeout is one), else the network error. After
// an error the connection is done.
func (c *Conn) ReadMessage(dst []byte) (Opcode, []byte, error) {
	dst = dst[:0]
	var op Opcode   // of the message being assembled; 0: none yet
	var z *inflater // a compressed message's; its payload goes to z.in
	defer func() {
		if z != nil {
			putInflater(z)
		}
	}()
	for {
		h, err := c.readHeader()
		if err != nil {
			if op != 0 && errors.Is(err, io.EOF) {
				// Between the fragments of a message: cut off too.
				err = fmt.Errorf("websocket read: %w", io.ErrUnexpectedEOF)
			}
			return 0, dst, err
		}
		if err := c.checkHeader(h); err != nil {
			return 0, dst, err
		}
		if h.op.control() {
			if err := c.readControl(h); err != nil {
				return 0, dst, err
			}
			continue
		}
		switch {
		case h.op == OpContinuation && op == 0:
			return 0, dst, c.fail(StatusProtocolError, "continuation frame without a message to continue")
		case h.op != OpContinuation && op != 0:
			return 0, dst, c.fail(StatusProtocolError, "new message inside a fragmented message")
		case h.op == OpText, h.op == OpBinary:
			op = h.op
			if h.rsv != 0 {
				z = getInflater()
			}
		case h.op != OpContinuation:
			return 0, dst, c.fail(StatusProtocolError, fmt.Sprintf("unknown opcode %d", h.op))
		}
		if z != nil {
			z.in, err = c.readFrame(z.in, h, c.deflatedLimit())
		} else {
			dst, err = c.readFrame(dst, h, uint64(c.readLimit))
		}
		if err != nil {
			return 0, dst, err
		}
		if !h.fin {
			continue
		}
		// Text is not checked for UTF-8 here, inflated or not: the
		// caller's decoder answers a malformed message and the
		// connection stays usable.
		if z != nil {
			dst, err = c.inflateMessage(z, dst)
		}
		return op, dst, err
	}
}

// readFrame appends the payload of the data frame h to the message so
// far, buf, which may hold limit bytes in all.
func (c *Conn) readFrame(buf []byte, h header, limit uint64) ([]byte, error) {
	// No overflow: both terms are below 1<<63 (checkHeader).
	if uint64(len(buf))+h.length > limit {
		return buf, c.fail(StatusMessageTooBig, fmt.Sprintf("message larger than %d bytes", c.readLimit))
	}
	n := len(buf)
	buf, err := c.readPayload(buf, int(h.length))
	if err != nil {
		return buf, err
	}
	if h.masked {
		mask(buf[n:], h.key, 0)
	}
	return buf, nil
}

// deflatedLimit bounds a compressed message as received: the read limit
// with room for deflate's worst case, stored or fixed-Huffman blocks of
// incompressible data (at most 1/8 more). What it inflates to is bounded
// by the read limit itself (inflateMessage).
func (c *Conn) deflatedLimit() uint64 {
	l := uint64(c.readLimit)
	return l + l/8 + 64
}

// inflateMessage inflates the compressed message in z into dst.
func (c *Conn) inflateMessage(z *inflater, dst []byte) ([]byte, error) {
	limit := int(min(c.readLimit, math.MaxInt/2))
	dst, err := z.inflate(dst, limit)
	switch {
	case errors.Is(err, errInflateTooBig):
		return dst, c.fail(StatusMessageTooBig, fmt.Sprintf("message larger than %d bytes once inflated", c.readLimit))
	case err != nil:
		return dst, c.fail(StatusInvalidPayload, "invalid permessage-deflate data")
	}
	return dst, nil
}

// readHeader reads one frame header.
func (c *Conn) readHeader() (header, error) {
	b := c.hdr[:]
	if n, err := io.ReadFull(c.br, b[:2]); err != nil {
		if err := c.readRest(b[n:2], err); err != nil {
			return header{}, err
		}
	}
	h := header{
		fin:    b[0]&finBit != 0,
		rsv:    b[0] & rsvBits,
		op:     Opcode(b[0] & 0x0F),
		masked: b[1]&maskBit != 0,
		length: uint64(b[1] &^ maskBit),
	}
	ext := 0 // bytes of extended length
	switch h.length {
	case 126:
		ext = 2
	case 127:
		ext = 8
	}
	n := ext
	if h.masked {
		n += 4
	}
	if n == 0 {
		return h, nil
	}
	if k, err := io.ReadFull(c.br, b[2:2+n]); err != nil {
		if err := c.readRest(b[2+k:2+n], midFrame(err)); err != nil {
			return h, err
		}
	}
	switch ext {
	case 2:
		h.length = uint64(binary.BigEndian.Uint16(b[2:]))
	case 8:
		h.length = binary.BigEndian.Uint64(b[2:])
	}
	if h.masked {
		h.key = binary.LittleEndian.Uint32(b[2+ext:])
	}
	return h, nil
}

// checkHeader applies the rules every frame must follow.
func (c *Conn) checkHeader(h header) error {
	switch {
	case h.rsv&^c.rsvOK() != 0:
		return c.fail(StatusProtocolError, "reserved bits set but no extension was negotiated that defines them")
	case h.rsv != 0 && (h.op.control() || h.op == OpContinuation):
		// RFC 7692 section 6: RSV1 marks the first frame of a
		// compressed message; control frames are never compressed.
		return c.fail(StatusProtocolError, "RSV1 set on a control or continuation frame")
	case !c.client && !h.masked:
		return c.fail(StatusProtocolError, "client frames must be masked")
	case c.client && h.masked:
		return c.fail(StatusProtocolError, "server frames must not be masked")
	case h.length>>63 != 0:
		return c.fail(StatusProtocolError, "frame length has its most significant bit set")
	case h.op.control() && (!h.fin || h.length > maxControlPayload):
		return c.fail(StatusProtocolError, "control frame fragmented or longer than 125 bytes")
	}
	return nil
}

//go:build !js

package websocket

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// DefaultFrameTimeout is how long a frame's payload may take to arrive
// after its header unless SetFrameTimeout says otherwise.
const DefaultFrameTimeout = 30 * time.Second

// CloseTimeout is how long Close waits for the peer's close frame before
// it drops the connection.
const CloseTimeout = 5 * time.Second

// Conn is a WebSocket connection.
type Conn struct {
	nc          net.Conn
	client      bool // frames it writes are masked, frames it reads are not
	subprotocol string

	// Owned by the reading goroutine.
	br           *bufio.Reader
	readLimit    int64
	frameTimeout time.Duration // see SetFrameTimeout
	// readDeadlineSet is when a payload last set the read deadline, zero
	// when none is set (see readPayload).
	readDeadlineSet time.Time
	hdr             [MaxHeader]byte
	ctl             [maxControlPayload]byte

	// permessage-deflate, set by the handshake before the Conn is
	// shared: deflate says it was negotiated; data messages of
	// deflateMin bytes or more are sent compressed.
	deflate    bool
	deflateMin int

	pongs  atomic.Uint64 // pong frames received
	onPong func()        // called by the reader after each pong; set before reading

	wmu          sync.Mutex // serializes writes; guards the fields below
	writeTimeout time.Duration
	deadlineSet  time.Time // when the write deadline was last moved
	closeSent    bool
	broken       bool // a write failed: the stream may hold half a frame
	try          tryWriter

	// cmu guards closeTimer; not wmu, so that CloseNow does not wait for
	// a write blocked on a peer that stopped reading.
	cmu        sync.Mutex
	closeTimer *time.Timer
	closeOnce  sync.Once
}

// newConn wraps nc, whose first bytes may already be buffered in br.
func newConn(nc net.Conn, br *bufio.Reader, client bool, subprotocol string) *Conn {
	c := &Conn{nc: nc, br: br, client: client, subprotocol: subprotocol,
		readLimit: 32 << 10, frameTimeout: DefaultFrameTimeout}
	c.try.init(c)
	return c
}

// setDeflate turns permessage-deflate on, as the handshake negotiated.
func (c *Conn) setDeflate(o *DeflateOptions) {
	c.deflate, c.deflateMin = true, o.threshold()
}

// Deflate reports whether permessage-deflate was negotiated and, if so,
// the size from which AppendFrame compresses a message. Two connections
// with the same answer frame a message as the same bytes (no context
// takeover), so a caller may copy one's frame for the other.
func (c *Conn) Deflate() (threshold int, ok bool) { return c.deflateMin, c.deflate }

// rsvOK returns the reserved bits a data frame may carry.
func (c *Conn) rsvOK() byte {
	if c.deflate {
		return rsv1Bit
	}
	return 0
}

// Subprotocol returns the negotiated subprotocol, "" if none.
func (c *Conn) Subprotocol() string { return c.subprotocol }

// SetReadLimit sets the largest message ReadMessage accepts (default 32
// KiB); a larger one closes the connection with StatusMessageTooBig.
func (c *Conn) SetReadLimit(n int64) { c.readLimit = n }

// SetFrameTimeout bounds how long a frame's payload may take to arrive
// once its header has been read (default DefaultFrameTimeout); a frame
// still incomplete then closes the connection with StatusPolicyViolation.
// Without it a peer could announce a large frame, send part of it and
// stall, holding the connection and its buffer until pings give up.
// Zero or less means no bound. For the reading goroutine only.
func (c *Conn) SetFrameTimeout(d time.Duration) { c.frameTimeout = d }

// SetWriteTimeout bounds each Write: a peer that does not read for that
// long (0.9 to 1 times d) fails the write. Zero (the default) means no
// bound.
func (c *Conn) SetWriteTimeout(d time.Duration) {
	c.wmu.Lock()
	c.writeTimeout = d
	c.deadlineSet = time.Time{}
	if d <= 0 {
		// Lift the deadline the last bounded write set.
		c.nc.SetWriteDeadline(noDeadline)
	}
	c.wmu.Unlock()
}

// Buffered returns how many bytes have been read from the network but
// not yet returned by ReadMessage: more than zero means the next message
// may already be in hand. For the reading goroutine only.
func (c *Conn) Buffered() int { return c.br.Buffered() }

// MessagePending reports whether the bytes received but not yet read hold
// the start of a data message, past any whole control frames: the next
// ReadMessage then returns as soon as the rest of a message the peer has
// begun to send arrives. It is false when nothing is buffered, or only
// control frames (or part of one): ReadMessage would answer them and then
// wait for the peer's next message, which may itself wait for an answer
// to what was read before. A reader that holds back its replies while
// more is buffered (to send them in one write) must check this rather
// than Buffered: a ping behind the last request would otherwise hold the
// replies until the peer's next message, forever if the peer waits for
// them. For the reading goroutine; it does not allocate.
func (c *Conn) MessagePending() bool {
	b, _ := c.br.Peek(c.br.Buffered()) // what is buffered: no read, no error
	for len(b) > 0 {
		if !Opcode(b[0] & 0x0F).control() {
			return true
		}
		if len(b) < 2 {
			return false
		}
		n := 2 + int(b[1]&^maskBit)
		if b[1]&maskBit != 0 {
			n += 4
		}
		if b[1]&^maskBit > maxControlPayload {
			return true // a malformed control frame: ReadMessage fails at once
		}
		if len(b) < n {
			return false
		}
		b = b[n:]
	}
	return false
}

// OnPong sets a function the reading goroutine calls after each pong
// frame; it must not block. Set it before the first ReadMessage.
func (c *Conn) OnPong(f func()) { c.onPong = f }

// Pongs returns how many pong frames have been read.
func (c *Conn) Pongs() uint64 { return c.pongs.Load() }

// readControl reads and acts on a control frame.
func (c *Conn) readControl(h header) error {
	p := c.ctl[:h.length]
	if n, err := io.ReadFull(c.br, p); err != nil {
		if err := c.readRest(p[n:], midFrame(err)); err != nil {
			return err
		}
	}
	if h.masked {
		mask(p, h.key, 0)
	}
	switch h.op {
	case OpPing:
		// Once this side sent its close frame no pong may follow; the
		// reader goes on to the peer's answer.
		if err := c.writeControl(OpPong, p); err != nil && !errors.Is(err, ErrClosed) {
			return err
		}
		return nil
	case OpPong:
		c.pongs.Add(1)
		if c.onPong != nil {
			c.onPong()
		}
		return nil
	case OpClose:
		return c.peerClosed(p)
	}
	return c.fail(StatusProtocolError, fmt.Sprintf("unknown control opcode %d", h.op))
}

// peerClosed handles the peer's close frame: it answers with the same
// code unless this side closed first, closes the connection and returns
// the *CloseError.
func (c *Conn) peerClosed(p []byte) error {
	ce := &CloseError{Code: StatusNoStatusRcvd}
	if len(p) == 1 {
		return c.fail(StatusProtocolError, "close frame with a 1-byte payload")
	}
	if len(p) >= 2 {
		ce.Code = StatusCode(binary.BigEndian.Uint16(p))
		if !ce.Code.sendable() {
			return c.fail(StatusProtocolError, fmt.Sprintf("close frame with invalid status %d", int(ce.Code)))
		}
		if !utf8.Valid(p[2:]) {
			return c.fail(StatusInvalidPayload, "close reason is not valid UTF-8")
		}
		ce.Reason = string(p[2:])
	}
	echo := ce.Code
	if echo == StatusNoStatusRcvd {
		echo = 0 // an empty close frame
	}
	_ = c.sendClose(echo, "") // the peer may already be gone
	c.CloseNow()
	return ce
}

// fail sends a close frame for a protocol violation, closes the
// connection and returns the error. The peer may still be sending (say, a
// message past the read limit): its bytes are read and dropped until it
// closes or the close timer Close armed drops the connection (within
// CloseTimeout), since closing with unread data resets the connection and
// the peer might never read why it was closed.
func (c *Conn) fail(code StatusCode, reason string) error {
	if !c.readDeadlineSet.IsZero() {
		// The drain below is bounded by the close timer, not by the
		// deadline a payload left.
		c.readDeadlineSet = time.Time{}
		_ = c.nc.SetReadDeadline(noDeadline)
	}
	if c.Close(code, reason) == nil {
		_, _ = io.Copy(io.Discard, c.br)
	}
	c.CloseNow()
	return &ProtocolError{Code: code, Reason: reason}
}

// AppendFrame appends a final frame of type op carrying payload to dst,
// as Write will send it (masked when this is a client). With
// permessage-deflate, a data message from the threshold on is compressed
// when that makes it shorter. It is safe from several goroutines.
func (c *Conn) AppendFrame(dst []byte, op Opcode, payload []byte) []byte {
	if c.deflate && !op.control() && len(payload) >= c.deflateMin {
		if out, ok := c.appendDeflatedFrame(dst, op, payload); ok {
			return out
		}
	}
	if !c.client {
		dst = appendHeader(dst, op, 0, len(payload), false, 0)
		return append(dst, payload...)
	}
	key := newMaskKey()
	dst = appendHeader(dst, op, 0, len(payload), true, key)
	n := len(dst)
	dst = append(dst, payload...)
	mask(dst[n:], key, 0)
	return dst
}

// appendDeflatedFrame appends a compressed frame of payload, or reports
// false when compressing does not make it shorter. The header's length is
// known only once the payload is compressed: the compressed bytes go
// after room for the longest header and are moved back behind the real
// one, which costs less than a buffer of their own.
func (c *Conn) appendDeflatedFrame(dst []byte, op Opcode, payload []byte) ([]byte, bool) {
	start, room := len(dst), MaxHeader-4
	if c.client {
		room = MaxHeader
	}
	// Room for the payload stored as it is, with the block headers of
	// deflate's stored blocks (5 bytes per 64 KiB) and the flush: the
	// flate writer's appends then never reallocate, even when the
	// payload does not compress.
	dst = slices.Grow(dst, room+len(payload)+len(payload)>>10+64)
	out, ok := appendDeflated(dst[:start+room], payload)
	if !ok {
		return out[:start], false
	}
	n := len(out) - start - room
	var key uint32
	if c.client {
		key = newMaskKey()
	}
	var hb [MaxHeader]byte
	hdr := appendHeader(hb[:0], op, rsv1Bit, n, c.client, key)
	copy(out[start+len(hdr):], out[start+room:])
	copy(out[start:], hdr)
	out = out[:start+len(hdr)+n]
	if c.client {
		mask(out[start+len(hdr):], key, 0)
	}
	return out, true
}

// Write sends b, whole frames made by AppendFrame, in one write. Writes
// from several goroutines do not interleave. After the close frame was
// sent, or once a write failed, Write returns ErrClosed. What a TryWrite
// kept goes out first; Write(nil) sends only that.
func (c *Conn) Write(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		return ErrClosed
	}
	return c.writeLocked(b)
}

func (c *Conn) writeLocked(b []byte) error {
	if c.broken {
		return ErrClosed
	}
	if c.writeTimeout > 0 {
		// Setting a deadline costs more than reading the clock: it is
		// moved only when a tenth of the timeout has passed since, so a
		// write is bounded by between 0.9 and 1 times the timeout.
		now := time.Now()
		if now.Sub(c.deadlineSet) > c.writeTimeout/10 {
			if err := c.nc.SetWriteDeadline(now.Add(c.writeTimeout)); err != nil {
				c.broken = true
				return fmt.Errorf("websocket write: %w", err)
			}
			c.deadlineSet = now
		}
	}
	if len(c.try.kept) > 0 {
		if err := c.writeKept(); err != nil {
			return err
		}
	}
	if len(b) == 0 {
		return nil
	}
	if _, err := c.nc.Write(b); err != nil {
		c.broken = true
		return fmt.Errorf("websocket write: %w", err)
	}
	return nil
}

// Ping sends a ping frame; Pongs counts the answers.
func (c *Conn) Ping() error { return c.writeControl(OpPing, nil) }

// writeControl sends a control frame. Nothing follows the close frame,
// which is sent once.
func (c *Conn) writeControl(op Opcode, p []byte) error {
	var buf [MaxHeader + maxControlPayload]byte
	f := c.AppendFrame(buf[:0], op, p)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closeSent {
		if op == OpClose {
			return nil
		}
		return ErrClosed
	}
	c.closeSent = op == OpClose
	return c.writeLocked(f)
}

// sendClose sends the close frame once; code 0 sends an empty one. The
// reason is cut to fit a control frame.
func (c *Conn) sendClose(code StatusCode, reason string) error {
	var p []byte
	if code != 0 {
		if n := maxControlPayload - 2; len(reason) > n {
			// Cut before the rune that straddles the limit.
			for n > 0 && !utf8.RuneStart(reason[n]) {
				n--
			}
			reason = reason[:n]
		}
		var buf [maxControlPayload]byte
		p = binary.BigEndian.AppendUint16(buf[:0], uint16(code))
		p = append(p, reason...)
	}
	return c.writeControl(OpClose, p)
}

// Close starts the closing handshake: it sends a close frame with code
// and reason and returns. The connection is closed when the reader gets
// the peer's answer, or after CloseTimeout, whichever comes first; the
// reader then returns an error.
func (c *Conn) Close(code StatusCode, reason string) error {
	if !code.sendable() {
		code = StatusInternalError
	}
	c.cmu.Lock()
	if c.closeTimer == nil {
		c.closeTimer = time.AfterFunc(CloseTimeout, c.CloseNow)
	}
	c.cmu.Unlock()
	err := c.sendClose(code, reason)
	if err != nil {
		c.CloseNow()
	}
	return err
}

// CloseNow closes the connection without a closing handshake.
func (c *Conn) CloseNow() {
	c.closeOnce.Do(func() {
		c.cmu.Lock()
		if c.closeTimer != nil {
			c.closeTimer.Stop()
		}
		c.cmu.Unlock()
		c.nc.Close()
	})
}

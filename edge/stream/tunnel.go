package stream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// Errors of a tunnel's reads and injections.
var (
	// ErrClosed is what Inject returns once the session has ended.
	ErrClosed = errors.New("stream: session closed")
	// errClientSent says the client sent bytes on the connection that
	// carries its stream, where it may send nothing (a browser never
	// does): the stream ends rather than guess what they are.
	errClientSent = errors.New("stream: client sent data on a stream connection")
)

// Tunnel is the net.Conn a session's WebSocket runs over when its client
// speaks HTTP (the package doc). Its writes come from the session's
// writer, one at a time (the WebSocket serializes them); its reads, from
// the session's reader; Inject, from the handlers of the client's POSTs.
type Tunnel struct {
	nc  net.Conn // the hijacked HTTP connection
	enc Encoder

	// The writer's alone.
	handshook bool   // the in-process upgrade's 101 was swallowed
	carry     []byte // a frame cut between two writes (the edge never does)
	wire      Wire
	endSent   bool // the session was told to close after the response ended

	mu      sync.Mutex // guards the fields below
	room    sync.Cond  // on mu: in shrank, or the tunnel closed
	in      []byte     // client frames the session has not read yet
	limit   int        // bytes in may hold before Inject waits
	reading bool       // the reader is parked in a read of nc
	kicked  bool       // Inject cut that read short
	gone    error      // why nc can no longer be read (the client left)
	closed  bool
	probe   [1]byte
}

// NewTunnel returns a tunnel over the hijacked connection nc whose
// output enc encodes; Inject waits while more than limit bytes of client
// frames are unread.
func NewTunnel(nc net.Conn, enc Encoder, limit int) *Tunnel {
	t := &Tunnel{nc: nc, enc: enc, limit: limit}
	t.room.L = &t.mu
	return t
}

// SetHeaders sets header lines ("Name: value\r\n" each) that the
// response's head carries (CORS), and whether the client speaks
// HTTP/1.0, which takes no chunked body; before the session runs.
func (t *Tunnel) SetHeaders(lines string, http10 bool) {
	t.wire.extra, t.wire.identity = lines, http10
}

// Write implements net.Conn for the session's writer: b holds whole
// WebSocket frames, which the encoder turns into the response's bytes.
func (t *Tunnel) Write(b []byte) (int, error) {
	if !t.handshook {
		// The first write is the in-process upgrade's 101 response: the
		// client got its own response head (or gets it from the encoder).
		t.handshook = true
		return len(b), nil
	}
	buf := b
	if len(t.carry) > 0 {
		buf = append(t.carry, b...)
	}
	t.wire.raw, t.wire.body = getBuf(), getBuf()
	defer t.releaseWire()
	for {
		f, n, err := nextFrame(buf)
		if err != nil {
			return 0, err
		}
		if n == 0 {
			break
		}
		t.frame(f)
		buf = buf[n:]
	}
	t.carry = append(t.carry[:0], buf...)
	if len(t.carry) == 0 {
		t.carry = nil
	}
	if err := t.send(); err != nil {
		return 0, err
	}
	return len(b), nil
}

// frame encodes one frame of the session's.
func (t *Tunnel) frame(f frame) {
	if t.wire.ended {
		return // the response is complete; the session is told to close
	}
	switch f.op {
	case opText, opBinary:
		t.enc.Message(&t.wire, f.op, f.payload)
	case opPing:
		// The client cannot answer pings: a stream that takes the
		// keep-alive is alive, and one that does not is cut off by the
		// write timeout as a WebSocket would be.
		t.enc.KeepAlive(&t.wire)
		t.inject(appendClientFrame(nil, opPong, f.payload))
	case opClose:
		code, reason := parseClose(f.payload)
		t.enc.Closing(&t.wire, code, reason)
		t.wire.End()
	}
}

// send writes what the frames of one write came to, and once the
// response has ended, tells the session to close (a client close frame),
// as a WebSocket client would answer the session's close frame.
func (t *Tunnel) send() error {
	out := t.wire.bytes(getBuf())
	defer putBuf(out)
	if len(out) > 0 {
		if _, err := t.nc.Write(out); err != nil {
			return fmt.Errorf("stream: write: %w", err)
		}
	}
	if t.wire.ended && !t.endSent {
		t.endSent = true
		t.inject(appendClientFrame(nil, opClose, closePayload(1000)))
	}
	return nil
}

func (t *Tunnel) releaseWire() {
	putBuf(t.wire.raw)
	putBuf(t.wire.body)
	t.wire.raw, t.wire.body = nil, nil
}

// Read implements net.Conn for the session's reader: the client frames
// injected so far. With none, it parks in a read of the HTTP connection,
// which returns when the client goes away (the stream then ends as a
// WebSocket whose peer vanished) or when Inject cuts it short.
func (t *Tunnel) Read(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		switch {
		case len(t.in) > 0:
			n := copy(p, t.in)
			t.in = t.in[n:]
			if len(t.in) == 0 {
				t.in = nil // an idle stream holds no buffer
			}
			t.room.Broadcast()
			return n, nil
		case t.closed:
			return 0, net.ErrClosed
		case t.gone != nil:
			return 0, t.gone
		}
		t.reading = true
		t.mu.Unlock()
		n, err := t.nc.Read(t.probe[:])
		t.mu.Lock()
		t.reading = false
		if n > 0 {
			t.gone = errClientSent
		}
		if t.kicked {
			t.kicked = false
			_ = t.nc.SetReadDeadline(time.Time{})
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue
			}
		}
		if err != nil && t.gone == nil {
			t.gone = fmt.Errorf("stream: client connection: %w", err)
		}
	}
}

// Inject hands the session frames (client frames, appendClientFrame)
// once fewer than the limit's bytes wait unread, all or none. It returns
// ErrClosed once the session has ended, or ctx's error.
func (t *Tunnel) Inject(ctx context.Context, frames []byte) error {
	stop := context.AfterFunc(ctx, func() {
		t.mu.Lock()
		t.room.Broadcast()
		t.mu.Unlock()
	})
	defer stop()
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.in) > 0 && len(t.in)+len(frames) > t.limit && !t.closed && ctx.Err() == nil {
		t.room.Wait()
	}
	switch {
	case t.closed:
		return ErrClosed
	case ctx.Err() != nil:
		return fmt.Errorf("stream: inject: %w", ctx.Err())
	}
	t.injectLocked(frames)
	return nil
}

// inject is Inject for the tunnel itself (pongs, the close), which never
// waits: a control frame goes in whatever the queue holds.
func (t *Tunnel) inject(frames []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.injectLocked(frames)
	}
}

func (t *Tunnel) injectLocked(frames []byte) {
	t.in = append(t.in, frames...)
	if t.reading && !t.kicked {
		t.kicked = true
		// A deadline in the past wakes the parked read at once, or makes
		// the read about to start return at once.
		_ = t.nc.SetReadDeadline(time.Unix(1, 0))
	}
}

// Close implements net.Conn: the session is done with the connection.
func (t *Tunnel) Close() error {
	t.mu.Lock()
	already := t.closed
	t.closed = true
	t.in = nil
	t.room.Broadcast()
	t.mu.Unlock()
	if already {
		return nil
	}
	if err := t.nc.Close(); err != nil {
		return fmt.Errorf("stream: close: %w", err)
	}
	return nil
}

// Done reports whether the session has closed the tunnel.
func (t *Tunnel) Done() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// LocalAddr implements net.Conn.
func (t *Tunnel) LocalAddr() net.Addr { return t.nc.LocalAddr() }

// RemoteAddr implements net.Conn.
func (t *Tunnel) RemoteAddr() net.Addr { return t.nc.RemoteAddr() }

// SetDeadline implements net.Conn: it sets the write deadline only
// (SetReadDeadline says why).
func (t *Tunnel) SetDeadline(d time.Time) error { return t.SetWriteDeadline(d) }

// SetReadDeadline implements net.Conn and does nothing: the session's
// reader bounds how long a frame's payload may take to arrive, and an
// injected frame arrives whole.
func (t *Tunnel) SetReadDeadline(time.Time) error { return nil }

// SetWriteDeadline implements net.Conn: the session's write timeout
// bounds writes to the HTTP connection, so a client that stops reading
// its stream is cut off as a WebSocket client would be.
func (t *Tunnel) SetWriteDeadline(d time.Time) error {
	if err := t.nc.SetWriteDeadline(d); err != nil {
		return fmt.Errorf("stream: write deadline: %w", err)
	}
	return nil
}

// bufs recycles the buffers of writes, so an idle stream holds none.
var bufs = sync.Pool{New: func() any { return new([]byte) }}

func getBuf() []byte { return (*bufs.Get().(*[]byte))[:0] }

func putBuf(b []byte) {
	if b == nil || cap(b) > 256<<10 {
		return
	}
	bufs.Put(&b)
}

// Open writes the head of a chunked response of ctype and a first chunk,
// body (none if empty), before the session runs: what a client needs
// before the session says anything (a stream's id, for its POSTs).
func (t *Tunnel) Open(ctype string, body []byte) error {
	t.wire.raw, t.wire.body = getBuf(), append(getBuf(), body...)
	defer t.releaseWire()
	t.wire.Head(ctype)
	return t.send()
}

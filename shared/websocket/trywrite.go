//go:build !js

package websocket

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// TryResult says what TryWrite did with the bytes it was given.
type TryResult int

const (
	// TryWritten: all of them went out.
	TryWritten TryResult = iota
	// TryKept: the socket took only part; the Conn keeps the rest and
	// the next Write sends it first, so the caller must call Write (it
	// may block) before the peer can see a whole frame.
	TryKept
	// TryBusy: nothing was written or kept: another write holds the
	// connection (it may be blocked on the peer), a TryWrite's rest is
	// still kept, or the Conn cannot write without blocking. Send them
	// with Write.
	TryBusy
)

// tryWriter is the state of TryWrite. The fields are guarded by the
// Conn's wmu; fn and raw are set once, by init.
type tryWriter struct {
	raw  syscall.RawConn       // nil: nc is no socket; TryWrite always says TryBusy
	fn   func(fd uintptr) bool // c.try.write as a func value, made once: a closure per call would allocate
	buf  []byte                // the bytes being written, for fn
	err  error                 // the error fn saw
	kept []byte                // what the socket did not take; the next Write sends it
}

// CanTryWrite reports whether TryWrite can write at all: the connection
// is a plain socket (TLS connections always get TryBusy).
func (c *Conn) CanTryWrite() bool { return c.try.raw != nil }

// TryWrite sends b, whole frames made by AppendFrame, as far as that needs
// no waiting: it never blocks, not on the peer nor on another write. A
// server can so write to many peers from one goroutine, handing a
// connection to a goroutine of its own only when its peer is slow (see
// TryResult). An error is a failed write, as from Write.
func (c *Conn) TryWrite(b []byte) (TryResult, error) {
	t := &c.try
	if t.raw == nil || !c.wmu.TryLock() {
		return TryBusy, nil
	}
	defer c.wmu.Unlock()
	if c.closeSent || c.broken {
		return TryWritten, ErrClosed
	}
	if len(t.kept) > 0 {
		return TryBusy, nil
	}
	t.buf = b
	err := t.raw.Write(t.fn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// The deadline of the last Write has passed: this write needs
		// none. Lifted here, and set again by the next Write.
		if err = c.nc.SetWriteDeadline(noDeadline); err == nil {
			c.deadlineSet = time.Time{}
			err = t.raw.Write(t.fn)
		}
	}
	if err == nil {
		err = t.err
	}
	rest := t.buf
	t.buf, t.err = nil, nil
	if err != nil {
		c.broken = true
		return TryWritten, fmt.Errorf("websocket write: %w", err)
	}
	if len(rest) == 0 {
		return TryWritten, nil
	}
	t.kept = append(t.kept[:0], rest...)
	return TryKept, nil
}

// keptKeep is the largest kept buffer held once written: a connection
// whose peer was slow once does not keep a large one.
const keptKeep = 16 << 10

// writeKept writes what TryWrite kept. wmu, with the deadline set.
func (c *Conn) writeKept() error {
	t := &c.try
	_, err := c.nc.Write(t.kept)
	t.kept = t.kept[:0]
	if cap(t.kept) > keptKeep {
		t.kept = nil
	}
	if err != nil {
		c.broken = true
		return fmt.Errorf("websocket write: %w", err)
	}
	return nil
}

//go:build unix

package websocket

import "syscall"

// init turns TryWrite on for a connection that is a socket.
func (t *tryWriter) init(c *Conn) {
	sc, ok := c.nc.(syscall.Conn)
	if !ok {
		return // TLS, or a net.Pipe in tests
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	t.raw, t.fn = raw, t.write
}

// write is called by RawConn.Write with the socket's descriptor, which
// is non-blocking: a full socket buffer gives EAGAIN instead of waiting.
// It always returns true, so that RawConn.Write never waits for the
// socket to become writable.
func (t *tryWriter) write(fd uintptr) bool {
	for len(t.buf) > 0 {
		n, err := syscall.Write(int(fd), t.buf)
		if n > 0 {
			t.buf = t.buf[n:]
		}
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return true
		case err != nil:
			t.err = err
			return true
		case n == 0:
			return true // not expected of a socket; never spin on it
		}
	}
	return true
}

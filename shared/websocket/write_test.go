//go:build !js

package websocket

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// roles builds a connection of each role with its raw peer.
var roles = []struct {
	name string
	conn func(testing.TB) (*Conn, *rawPeer)
}{
	{name: "server", conn: func(tb testing.TB) (*Conn, *rawPeer) { return acceptConn(tb, nil) }},
	{name: "client", conn: func(tb testing.TB) (*Conn, *rawPeer) { return dialConn(tb, nil) }},
}

// TestWriteAfterClose checks that nothing is sent after the close frame:
// every write returns ErrClosed.
func TestWriteAfterClose(t *testing.T) {
	t.Parallel()
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			c, p := r.conn(t)
			if err := c.Close(StatusGoingAway, "restart"); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if code, reason := p.readClose(); code != StatusGoingAway || reason != "restart" {
				t.Fatalf("close frame %d %q, want 1001 restart", code, reason)
			}
			writes := []struct {
				name string
				do   func() error
			}{
				{"Write", func() error { return c.Write(c.AppendFrame(nil, OpText, []byte("x"))) }},
				{"Write of nothing", func() error { return c.Write(nil) }},
				{"writeMessage", func() error { return writeMessage(c, OpBinary, []byte{1}) }},
				{"Ping", c.Ping},
			}
			for _, w := range writes {
				if err := w.do(); !errors.Is(err, ErrClosed) {
					t.Errorf("%s after Close = %v, want ErrClosed", w.name, err)
				}
			}
			if err := c.Close(StatusNormalClosure, "again"); err != nil {
				t.Errorf("second Close = %v, want nil", err)
			}
			c.CloseNow()
			c.CloseNow()
			// Nothing but the one close frame reached the peer.
			p.expectEOF()
		})
	}
}

// TestWriteAfterCloseNow checks that writes fail once the connection was
// dropped.
func TestWriteAfterCloseNow(t *testing.T) {
	t.Parallel()
	c, p := acceptConn(t, nil)
	c.CloseNow()
	if err := writeMessage(c, OpText, []byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Errorf("first write after CloseNow = %v, want net.ErrClosed", err)
	}
	if err := writeMessage(c, OpText, []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("second write after CloseNow = %v, want ErrClosed", err)
	}
	p.expectEOF()
}

// fillUntilError writes 64 KiB frames until a write fails; the peer must
// not be reading.
func fillUntilError(t *testing.T, c *Conn) error {
	t.Helper()
	payload := make([]byte, 64<<10)
	var buf []byte
	for range 100_000 { // 6 GB: far more than any socket buffer
		buf = c.AppendFrame(buf[:0], OpBinary, payload)
		if err := c.Write(buf); err != nil {
			return err
		}
	}
	t.Fatal("writes to a peer that never reads kept succeeding")
	return nil
}

// shrinkBuffers makes the socket buffers small so that a peer that does
// not read blocks writes quickly.
func shrinkBuffers(c *Conn, p *rawPeer) {
	c.nc.(*net.TCPConn).SetWriteBuffer(8 << 10)
	p.nc.(*net.TCPConn).SetReadBuffer(8 << 10)
}

// TestWriteTimeout has a peer that never reads: once the socket is full a
// Write fails after the write timeout, and later writes return ErrClosed
// since the stream may hold half a frame.
func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	for _, r := range roles {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			c, p := r.conn(t)
			shrinkBuffers(c, p)
			c.SetWriteTimeout(200 * time.Millisecond)
			err := fillUntilError(t, c)
			var ne net.Error
			if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("write error %v, want a timeout", err)
			}
			if err := c.Write(c.AppendFrame(nil, OpText, []byte("x"))); !errors.Is(err, ErrClosed) {
				t.Errorf("Write after the timeout = %v, want ErrClosed", err)
			}
			if err := c.Ping(); !errors.Is(err, ErrClosed) {
				t.Errorf("Ping after the timeout = %v, want ErrClosed", err)
			}
		})
	}
}

// deadlineConn records the write deadlines set on a net.Conn.
type deadlineConn struct {
	net.Conn
	mu   sync.Mutex
	last time.Time
}

func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.mu.Lock()
	d.last = t
	d.mu.Unlock()
	return d.Conn.SetWriteDeadline(t)
}

func (d *deadlineConn) lastDeadline() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.last
}

// TestWriteTimeoutCleared checks that SetWriteTimeout(0) lifts the bound:
// the deadline an earlier Write set must not fail later writes.
func TestWriteTimeoutCleared(t *testing.T) {
	t.Parallel()
	s, p := acceptConn(t, nil)
	dc := &deadlineConn{Conn: s.nc}
	c := newConn(dc, bufio.NewReader(dc), false, "")
	c.SetWriteTimeout(time.Minute)
	if err := writeMessage(c, OpText, []byte("bounded")); err != nil {
		t.Fatal(err)
	}
	if dc.lastDeadline().IsZero() {
		t.Fatal("a write with a timeout set no deadline")
	}
	c.SetWriteTimeout(0)
	if err := writeMessage(c, OpText, []byte("unbounded")); err != nil {
		t.Fatal(err)
	}
	if dl := dc.lastDeadline(); !dl.IsZero() {
		t.Errorf("write deadline still %v after SetWriteTimeout(0)", time.Until(dl).Round(time.Second))
	}
	for _, want := range []string{"bounded", "unbounded"} {
		if f := p.readFrame(); string(f.payload) != want {
			t.Fatalf("peer read %q, want %q", f.payload, want)
		}
	}
}

// enteredConn closes entered when a Write reaches the socket.
type enteredConn struct {
	net.Conn
	once    sync.Once
	entered chan struct{}
}

func (e *enteredConn) Write(b []byte) (int, error) {
	e.once.Do(func() { close(e.entered) })
	return e.Conn.Write(b)
}

// TestCloseNowUnblocksWrite checks that CloseNow, from another goroutine,
// returns at once and ends a Write stuck on a peer that does not read,
// with no write timeout set.
func TestCloseNowUnblocksWrite(t *testing.T) {
	t.Parallel()
	s, p := acceptConn(t, nil)
	shrinkBuffers(s, p)
	ec := &enteredConn{Conn: s.nc, entered: make(chan struct{})}
	c := newConn(ec, bufio.NewReader(ec), false, "")
	done := make(chan error, 1)
	go func() {
		// Far more than the socket buffers hold: it cannot complete.
		done <- c.Write(c.AppendFrame(nil, OpBinary, make([]byte, 32<<20)))
	}()
	<-ec.entered
	closed := make(chan struct{})
	go func() { c.CloseNow(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(testTimeout):
		t.Fatal("CloseNow waited for the blocked Write")
	}
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("blocked Write returned %v, want net.ErrClosed", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Write still blocked after CloseNow")
	}
	if err := c.Write(nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after the failed one = %v, want ErrClosed", err)
	}
}

// TestConcurrentWrites has several goroutines write batches while the
// reader answers pings: every frame must reach the peer whole, each
// writer's frames in order.
func TestConcurrentWrites(t *testing.T) {
	t.Parallel()
	const writers, batches, perBatch, pings = 4, 50, 8, 20
	c, p := acceptConn(t, nil)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			var buf []byte
			for b := range batches {
				buf = buf[:0]
				for f := range perBatch {
					buf = c.AppendFrame(buf, OpText, fmt.Appendf(nil, "w%d-%04d-%0*d", w, b*perBatch+f, 100+w*50, 0))
				}
				if err := c.Write(buf); err != nil {
					return // reported as missing frames
				}
			}
		})
	}
	read := make(chan error, 1)
	go func() {
		op, msg, err := c.ReadMessage(nil)
		if err == nil && (op != OpText || string(msg) != "end") {
			err = fmt.Errorf("read %d %q, want end", op, msg)
		}
		read <- err
	}()
	for i := range pings {
		p.send(p.frame(OpPing, fmt.Appendf(nil, "ping %d", i)))
	}
	p.send(p.frame(OpText, []byte("end")))

	next := make([]int, writers)
	gotPings := 0
	for range writers*batches*perBatch + pings {
		f := p.readFrame()
		switch f.op {
		case OpPong:
			if want := fmt.Sprintf("ping %d", gotPings); string(f.payload) != want {
				t.Fatalf("pong %q, want %q", f.payload, want)
			}
			gotPings++
		case OpText:
			var w, seq int
			if _, err := fmt.Sscanf(string(f.payload), "w%d-%d-", &w, &seq); err != nil || w < 0 || w >= writers {
				t.Fatalf("mangled frame %q", f.payload)
			}
			if want := fmt.Sprintf("w%d-%04d-%0*d", w, next[w], 100+w*50, 0); string(f.payload) != want {
				t.Fatalf("frame %q, want %q", f.payload, want)
			}
			next[w]++
		default:
			t.Fatalf("unexpected frame %+v", f)
		}
	}
	wg.Wait()
	if err := <-read; err != nil {
		t.Fatalf("ReadMessage: %v", err)
	}
}

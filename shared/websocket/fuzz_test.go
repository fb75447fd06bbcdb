//go:build !js

package websocket

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// memConn is an in-memory net.Conn for fuzzing. Reads return at most
// chunk bytes at a time (0: all there is), as a network delivers them,
// then io.EOF; writes are kept in out.
type memConn struct {
	mu     sync.Mutex // the close timer may call Close from its goroutine
	in     []byte
	chunk  int
	out    bytes.Buffer
	closed bool
}

func (m *memConn) Read(b []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return 0, net.ErrClosed
	case len(m.in) == 0:
		return 0, io.EOF
	}
	if m.chunk > 0 && len(b) > m.chunk {
		b = b[:m.chunk]
	}
	n := copy(b, m.in)
	m.in = m.in[n:]
	return n, nil
}

func (m *memConn) Write(b []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return 0, net.ErrClosed
	}
	return m.out.Write(b)
}

func (m *memConn) Close() error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	return nil
}

func (m *memConn) written() []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return bytes.Clone(m.out.Bytes())
}

func (m *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (m *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (m *memConn) SetDeadline(time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(time.Time) error { return nil }

// hijacker is the http.ResponseWriter of a request read off a memConn.
type hijacker struct {
	http.ResponseWriter // nil: only Hijack is used
	nc                  net.Conn
	brw                 *bufio.ReadWriter
}

func (h *hijacker) Header() http.Header { return http.Header{} }

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) { return h.nc, h.brw, nil }

// fuzzLimit is the read limit under fuzzing: above 125, so that frames
// with a 16-bit length are read whole, and small enough to be crossed by
// inputs of at most maxFuzzInput bytes. Longer inputs reach no code that
// shorter ones do not (a header announces any length), and they stall the
// fuzzer: minimizing an input takes time quadratic in its length.
const (
	fuzzLimit    = 200
	maxFuzzInput = 400
)

// upgradeReq is a valid upgrade request, parsed once: net/http's parser
// pools its readers, which makes coverage depend on the garbage
// collector and the fuzzer's minimizing endless.
var upgradeReq = func() *http.Request {
	req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(upgradeRequest("example.com", ""))))
	if err != nil {
		panic(err)
	}
	return req
}()

// fuzzServer accepts upgradeReq on a connection that then delivers data
// in chunks of chunk bytes. With an odd chunk, net/http is taken to have
// buffered the first chunk along with the request.
func fuzzServer(t *testing.T, chunk byte, data []byte) (*Conn, *memConn) {
	m := &memConn{in: data, chunk: int(chunk)}
	br := bufio.NewReader(m)
	if chunk%2 == 1 {
		br.Peek(1)
	}
	c, err := Accept(&hijacker{nc: m, brw: bufio.NewReadWriter(br, bufio.NewWriter(m))}, upgradeReq, &AcceptOptions{ReadBufferSize: 16})
	if err != nil {
		t.Fatalf("Accept: %v", err)
	}
	return c, m
}

// fuzzClient is a client's connection, as Dial leaves it after the
// handshake (which TestDialFramesBehindResponse covers), reading data in
// chunks of chunk bytes.
func fuzzClient(chunk byte, data []byte) (*Conn, *memConn) {
	m := &memConn{in: data, chunk: int(chunk)}
	return newConn(m, bufio.NewReaderSize(m, 16), true, ""), m
}

// fuzzRead reads messages until an error and checks what a caller may
// rely on: messages are whole, typed and within the limit;
// the error is a *ProtocolError, a *CloseError or the end of the input;
// and what was written is pongs, then the close frame the error calls
// for.
func fuzzRead(t *testing.T, c *Conn, m *memConn, client bool) {
	defer c.CloseNow()
	c.SetReadLimit(fuzzLimit)
	var (
		buf []byte
		err error
	)
	for {
		var op Opcode
		op, buf, err = c.ReadMessage(buf)
		if err != nil {
			break
		}
		switch {
		case op != OpText && op != OpBinary:
			t.Fatalf("message of opcode %d", op)
		case len(buf) > fuzzLimit:
			t.Fatalf("message of %d bytes over the %d limit", len(buf), fuzzLimit)
		}
	}
	frames := writtenFrames(t, m.written(), client)
	var (
		pe       *ProtocolError
		ce       *CloseError
		wantLast = StatusCode(-1) // the close frame's code; -1: none
	)
	switch {
	case errors.As(err, &pe):
		switch pe.Code {
		case StatusProtocolError, StatusInvalidPayload, StatusMessageTooBig:
		default:
			t.Fatalf("ProtocolError with code %d", pe.Code)
		}
		wantLast = pe.Code
	case errors.As(err, &ce):
		if ce.Code != StatusNoStatusRcvd && !ce.Code.sendable() {
			t.Fatalf("CloseError with code %d", ce.Code)
		}
		wantLast = ce.Code
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
	default:
		t.Fatalf("ReadMessage error %T %v: not a *ProtocolError, *CloseError or end of input", err, err)
	}
	for i, f := range frames {
		last := i == len(frames)-1
		switch {
		case f.op == OpPong && !(last && wantLast >= 0):
		case f.op == OpClose && last && wantLast >= 0:
			code := StatusNoStatusRcvd
			if len(f.payload) >= 2 {
				code = StatusCode(binary.BigEndian.Uint16(f.payload))
			}
			if code != wantLast {
				t.Fatalf("close frame with code %d after error %v", code, err)
			}
		default:
			t.Fatalf("wrote frame %d of %d, opcode %d, after error %v", i, len(frames), f.op, err)
		}
	}
	if wantLast >= 0 && (len(frames) == 0 || frames[len(frames)-1].op != OpClose) {
		t.Fatalf("no close frame written after error %v", err)
	}
}

// writtenFrames parses what a Conn wrote after the handshake: final,
// unextended control frames, masked exactly when the Conn is a client.
func writtenFrames(t *testing.T, out []byte, client bool) []rawFrame {
	if !client {
		i := bytes.Index(out, []byte("\r\n\r\n"))
		if i < 0 || !bytes.HasPrefix(out, []byte("HTTP/1.1 101 ")) {
			t.Fatalf("no 101 response written: %q", out)
		}
		out = out[i+4:]
	}
	var frames []rawFrame
	for r := bytes.NewReader(out); r.Len() > 0; {
		rest := out[len(out)-r.Len():]
		f, err := readRawFrame(r)
		if err != nil {
			t.Fatalf("frame %d cut short (%v): %x", len(frames), err, out)
		}
		// A control frame's length fits the first length field.
		if n := rest[1] & 0x7F; !f.fin || f.rsv != 0 || f.masked != client || n > maxControlPayload {
			t.Fatalf("bad frame header written: %+v, length %d", f, n)
		}
		frames = append(frames, f)
	}
	return frames
}

// seeds are frame sequences worth starting from, for a peer in each role.
func seeds(clientFrames bool) [][]byte {
	m := clientFrames
	f := func(fin bool, op Opcode, p string) []byte { return wireFrame(fin, 0, op, m, []byte(p)) }
	cat := func(fs ...[]byte) []byte { return bytes.Join(fs, nil) }
	out := [][]byte{
		nil,
		f(true, OpText, "hello"),
		cat(f(true, OpBinary, ""), f(true, OpText, "é")),
		cat(f(false, OpText, "Hello, w\xc3"), f(true, OpPing, "abc"), f(false, OpContinuation, "\xb6r"), f(true, OpContinuation, "ld")),
		cat(f(true, OpPing, ""), f(true, OpPong, "x"), f(true, OpClose, "")),
		wireFrame(true, 0, OpClose, m, closePayload(StatusNormalClosure, "bye")),
		wireFrame(true, 0, OpBinary, m, bytes.Repeat([]byte{0xAB}, 300)),
		wireFrame(true, 0, OpBinary, m, bytes.Repeat([]byte{0xCD}, 70000)),
		{0x82, 0xFF, 0, 0, 0x01, 0, 0, 0, 0, 0, 1, 2, 3, 4},
		f(true, OpText, "abc")[:4],
	}
	vs := serverViolations
	if !clientFrames {
		vs = clientViolations
	}
	for _, v := range vs {
		out = append(out, bytes.Join(v.frames, nil))
	}
	for i, s := range out {
		out[i] = s[:min(len(s), maxFuzzInput)]
	}
	return out
}

// FuzzReadMessage feeds arbitrary bytes to a server's connection, after
// a valid upgrade request accepted by Accept.
func FuzzReadMessage(f *testing.F) {
	for i, s := range seeds(true) {
		f.Add(byte(i%5), s)
	}
	f.Fuzz(func(t *testing.T, chunk byte, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		c, m := fuzzServer(t, chunk, data)
		fuzzRead(t, c, m, false)
	})
}

// FuzzReadMessageClient feeds arbitrary bytes to a client's connection.
func FuzzReadMessageClient(f *testing.F) {
	for i, s := range seeds(false) {
		f.Add(byte(i%5), s)
	}
	f.Fuzz(func(t *testing.T, chunk byte, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		c, m := fuzzClient(chunk, data)
		fuzzRead(t, c, m, true)
	})
}

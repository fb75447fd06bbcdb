//go:build !js

package websocket

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// violation is a peer breaking RFC 6455 and the close code it earns.
type violation struct {
	name   string
	frames [][]byte
	limit  int64 // read limit, 0 for the default
	want   StatusCode
}

func masked(fin bool, rsv byte, op Opcode, p string) []byte {
	return wireFrame(fin, rsv, op, true, []byte(p))
}

func unmasked(fin bool, rsv byte, op Opcode, p string) []byte {
	return wireFrame(fin, rsv, op, false, []byte(p))
}

func closeFrame(code StatusCode, reason string, isMasked bool) []byte {
	return wireFrame(true, 0, OpClose, isMasked, closePayload(code, reason))
}

// serverViolations are sent by a client to a server.
var serverViolations = []violation{
	{name: "unmasked frame", frames: [][]byte{unmasked(true, 0, OpText, "hi")}, want: StatusProtocolError},
	{name: "unmasked empty frame", frames: [][]byte{unmasked(true, 0, OpBinary, "")}, want: StatusProtocolError},
	{name: "RSV1", frames: [][]byte{masked(true, 0x40, OpText, "hi")}, want: StatusProtocolError},
	{name: "RSV2", frames: [][]byte{masked(true, 0x20, OpBinary, "hi")}, want: StatusProtocolError},
	{name: "RSV3 on a ping", frames: [][]byte{masked(true, 0x10, OpPing, "")}, want: StatusProtocolError},
	{name: "unknown data opcode", frames: [][]byte{masked(true, 0, 0x3, "x")}, want: StatusProtocolError},
	{name: "unknown control opcode", frames: [][]byte{masked(true, 0, 0xB, "x")}, want: StatusProtocolError},
	{name: "continuation without start", frames: [][]byte{masked(true, 0, OpContinuation, "x")}, want: StatusProtocolError},
	{name: "text inside fragmented text", frames: [][]byte{
		masked(false, 0, OpText, "a"), masked(true, 0, OpText, "b"),
	}, want: StatusProtocolError},
	{name: "binary inside fragmented text", frames: [][]byte{
		masked(false, 0, OpText, "a"), masked(false, 0, OpContinuation, "b"), masked(true, 0, OpBinary, "c"),
	}, want: StatusProtocolError},
	{name: "unknown opcode inside fragmented message", frames: [][]byte{
		masked(false, 0, OpBinary, "a"), masked(true, 0, 0x7, "b"),
	}, want: StatusProtocolError},
	{name: "ping of 126 bytes", frames: [][]byte{masked(true, 0, OpPing, strings.Repeat("p", 126))}, want: StatusProtocolError},
	{name: "pong of 126 bytes", frames: [][]byte{masked(true, 0, OpPong, strings.Repeat("p", 126))}, want: StatusProtocolError},
	{name: "close of 126 bytes", frames: [][]byte{
		wireFrame(true, 0, OpClose, true, closePayload(StatusNormalClosure, strings.Repeat("r", 124))),
	}, want: StatusProtocolError},
	{name: "fragmented ping", frames: [][]byte{masked(false, 0, OpPing, "a")}, want: StatusProtocolError},
	{name: "fragmented close", frames: [][]byte{
		wireFrame(false, 0, OpClose, true, closePayload(StatusNormalClosure, "")),
	}, want: StatusProtocolError},
	{name: "close with a 1-byte payload", frames: [][]byte{masked(true, 0, OpClose, "\x03")}, want: StatusProtocolError},
	{name: "close code 0", frames: [][]byte{closeFrame(0, "", true)}, want: StatusProtocolError},
	{name: "close code 999", frames: [][]byte{closeFrame(999, "", true)}, want: StatusProtocolError},
	{name: "close code 1004", frames: [][]byte{closeFrame(1004, "", true)}, want: StatusProtocolError},
	{name: "close code 1005", frames: [][]byte{closeFrame(1005, "", true)}, want: StatusProtocolError},
	{name: "close code 1006", frames: [][]byte{closeFrame(1006, "", true)}, want: StatusProtocolError},
	{name: "close code 1015", frames: [][]byte{closeFrame(1015, "", true)}, want: StatusProtocolError},
	{name: "close code 2999", frames: [][]byte{closeFrame(2999, "", true)}, want: StatusProtocolError},
	{name: "close code 5000", frames: [][]byte{closeFrame(5000, "bye", true)}, want: StatusProtocolError},
	{name: "close reason not UTF-8", frames: [][]byte{closeFrame(StatusNormalClosure, "\xff\xfe", true)}, want: StatusInvalidPayload},
	{name: "message over the limit", limit: 100, frames: [][]byte{masked(true, 0, OpBinary, strings.Repeat("x", 101))}, want: StatusMessageTooBig},
	{name: "fragments over the limit", limit: 100, frames: [][]byte{
		masked(false, 0, OpBinary, strings.Repeat("x", 60)), masked(true, 0, OpContinuation, strings.Repeat("x", 41)),
	}, want: StatusMessageTooBig},
	{name: "message over the default 32 KiB limit", frames: [][]byte{
		masked(true, 0, OpBinary, strings.Repeat("x", 32<<10+1)),
	}, want: StatusMessageTooBig},
	{name: "announced length of 1 TiB", frames: [][]byte{
		{0x82, 0xFF, 0, 0, 0x01, 0, 0, 0, 0, 0, 1, 2, 3, 4},
	}, want: StatusMessageTooBig},
	{name: "length with its top bit set", frames: [][]byte{
		{0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4},
	}, want: StatusProtocolError},
}

// TestServerProtocolErrors sends each violation over a raw TCP socket
// after a valid handshake: ReadMessage must return a *ProtocolError with
// the violation's code, and the client must receive a close frame with
// that code.
func TestServerProtocolErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range serverViolations {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := acceptConn(t, nil)
			testViolation(t, c, p, tt)
		})
	}
}

// clientViolations are sent by a server to a client.
var clientViolations = []violation{
	{name: "masked frame", frames: [][]byte{masked(true, 0, OpText, "hi")}, want: StatusProtocolError},
	{name: "masked close", frames: [][]byte{closeFrame(StatusNormalClosure, "", true)}, want: StatusProtocolError},
	{name: "RSV1", frames: [][]byte{unmasked(true, 0x40, OpBinary, "hi")}, want: StatusProtocolError},
	{name: "continuation without start", frames: [][]byte{unmasked(false, 0, OpContinuation, "x")}, want: StatusProtocolError},
	{name: "close code 1005", frames: [][]byte{closeFrame(1005, "", false)}, want: StatusProtocolError},
	{name: "ping of 126 bytes", frames: [][]byte{unmasked(true, 0, OpPing, strings.Repeat("p", 126))}, want: StatusProtocolError},
	{name: "message over the limit", limit: 10, frames: [][]byte{unmasked(true, 0, OpText, "0123456789a")}, want: StatusMessageTooBig},
}

// TestClientProtocolErrors is TestServerProtocolErrors for a client made
// by Dial, facing a raw server: its close frame must be masked.
func TestClientProtocolErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range clientViolations {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := dialConn(t, nil)
			testViolation(t, c, p, tt)
		})
	}
}

// testViolation sends the violation and then acts as a peer should: it
// reads the close frame, answers it and closes its side. ReadMessage must
// return a *ProtocolError with the violation's code, and the connection
// must end closed.
func testViolation(t *testing.T, c *Conn, p *rawPeer, tt violation) {
	t.Helper()
	if tt.limit > 0 {
		c.SetReadLimit(tt.limit)
	}
	p.send(tt.frames...)
	read := make(chan error, 1)
	go func() {
		_, _, err := c.ReadMessage(nil)
		read <- err
	}()
	code, _ := p.readClose()
	if code != tt.want {
		t.Errorf("close frame on the wire has code %d, want %d", code, tt.want)
	}
	p.send(closeFrame(code, "", p.client))
	p.nc.(*net.TCPConn).CloseWrite()
	var err error
	select {
	case err = <-read:
	case <-time.After(testTimeout):
		t.Fatal("ReadMessage did not return after the peer closed")
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		t.Fatalf("ReadMessage error %v, want a *ProtocolError", err)
	}
	if pe.Code != tt.want {
		t.Errorf("ProtocolError code %d (%s), want %d", pe.Code, pe.Reason, tt.want)
	}
	p.expectEOF()
	if err := c.Write(c.AppendFrame(nil, OpText, []byte("late"))); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after a protocol error = %v, want ErrClosed", err)
	}
}

// TestViolationDrainsPeer has a client send a message far over the read
// limit: the server refuses it from the header, but goes on reading and
// dropping the rest, so the client's send completes instead of being
// reset, and the client reads the 1009 close frame.
func TestViolationDrainsPeer(t *testing.T) {
	t.Parallel()
	// More than the socket buffers of both ends hold (tcp_rmem's maximum
	// is commonly 6 or 32 MiB): the send completes only if the server reads.
	const size = 128 << 20
	c, p := acceptConn(t, nil)
	c.SetReadLimit(1 << 10)
	read := make(chan error, 1)
	go func() {
		_, _, err := c.ReadMessage(nil)
		read <- err
	}()
	sent := make(chan error, 1)
	go func() {
		// Header of a masked 128 MiB frame, then its payload.
		hdr := []byte{0x82, 0xFF}
		hdr = binary.BigEndian.AppendUint64(hdr, size)
		if _, err := p.nc.Write(append(hdr, testKey[:]...)); err != nil {
			sent <- err
			return
		}
		chunk := make([]byte, 64<<10)
		for range size / len(chunk) {
			if _, err := p.nc.Write(chunk); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	if code, _ := p.readClose(); code != StatusMessageTooBig {
		t.Errorf("close code %d, want 1009", code)
	}
	if err := <-sent; err != nil {
		t.Fatalf("sending the oversized message: %v (the server did not drain it)", err)
	}
	p.send(closeFrame(StatusMessageTooBig, "", true))
	p.nc.(*net.TCPConn).CloseWrite()
	var pe *ProtocolError
	if err := <-read; !errors.As(err, &pe) || pe.Code != StatusMessageTooBig {
		t.Fatalf("ReadMessage error %v, want a *ProtocolError 1009", err)
	}
	p.expectEOF()
}

// TestTextNotValidated pins the contract conn.go states: text messages
// are not checked for UTF-8 (the caller's decoder answers a malformed
// one), so such a message is delivered as text and the connection stays
// usable. RFC 6455 section 8.1 would fail the connection with 1007
// instead; close reasons are still checked (see serverViolations).
func TestTextNotValidated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		frames [][]byte
		want   string
	}{
		{name: "invalid byte", frames: [][]byte{masked(true, 0, OpText, "abc\xff")}, want: "abc\xff"},
		{name: "truncated rune", frames: [][]byte{masked(true, 0, OpText, "caf\xc3")}, want: "caf\xc3"},
		{name: "surrogate", frames: [][]byte{masked(true, 0, OpText, "\xed\xa0\x80")}, want: "\xed\xa0\x80"},
		{name: "fragmented", frames: [][]byte{
			masked(false, 0, OpText, "ab"), masked(true, 0, OpContinuation, "\xc3("),
		}, want: "ab\xc3("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := acceptConn(t, nil)
			p.send(append(tt.frames, masked(true, 0, OpText, "next"))...)
			for _, want := range []string{tt.want, "next"} {
				if op, msg, err := c.ReadMessage(nil); err != nil || op != OpText || string(msg) != want {
					t.Fatalf("ReadMessage = %d, %q, %v; want text %q", op, msg, err, want)
				}
			}
			if err := writeMessage(c, OpText, []byte("still open")); err != nil {
				t.Fatal(err)
			}
			if f := p.readFrame(); f.op != OpText || string(f.payload) != "still open" {
				t.Fatalf("peer read %+v, want the text message", f)
			}
		})
	}
}

// TestFragmentedMessage checks that a message split over frames, with a
// ping between them, is reassembled, and that the ping is answered with a
// pong carrying the same payload before the message is returned.
func TestFragmentedMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		frames [][]byte
		op     Opcode
		want   string
	}{
		{name: "text in 3 frames, ping between, rune split", frames: [][]byte{
			masked(false, 0, OpText, "Hello, w\xc3"),
			masked(true, 0, OpPing, "abc"),
			masked(false, 0, OpContinuation, "\xb6r"),
			masked(true, 0, OpContinuation, "ld"),
		}, op: OpText, want: "Hello, wörld"},
		{name: "binary with empty fragments", frames: [][]byte{
			masked(false, 0, OpBinary, ""),
			masked(false, 0, OpContinuation, "\x00\xff"),
			masked(true, 0, OpPing, "abc"),
			masked(true, 0, OpContinuation, ""),
		}, op: OpBinary, want: "\x00\xff"},
		{name: "large fragments", frames: [][]byte{
			masked(false, 0, OpBinary, strings.Repeat("a", 70000)),
			masked(true, 0, OpPing, "abc"),
			masked(true, 0, OpContinuation, strings.Repeat("b", 300)),
		}, op: OpBinary, want: strings.Repeat("a", 70000) + strings.Repeat("b", 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := acceptConn(t, nil)
			c.SetReadLimit(1 << 20)
			p.send(tt.frames...)
			p.send(masked(true, 0, OpText, "next"))
			op, msg, err := c.ReadMessage(nil)
			if err != nil || op != tt.op || string(msg) != tt.want {
				t.Fatalf("ReadMessage = %d, %.40q (%d bytes), %v; want %d, %.40q", op, msg, len(msg), err, tt.op, tt.want)
			}
			f := p.readFrame()
			if f.op != OpPong || string(f.payload) != "abc" || f.masked || !f.fin {
				t.Fatalf("answer to the ping: %+v, want an unmasked final pong with payload abc", f)
			}
			if op, msg, err := c.ReadMessage(msg); err != nil || op != OpText || string(msg) != "next" {
				t.Fatalf("next ReadMessage = %d, %q, %v", op, msg, err)
			}
		})
	}
}

// TestPeerClose checks the answer to a peer's close frame: ReadMessage
// returns its code and reason as a *CloseError, the same code is echoed,
// and the server then closes the TCP connection.
func TestPeerClose(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		payload  []byte
		wantCode StatusCode
		reason   string
	}{
		{name: "empty", payload: nil, wantCode: StatusNoStatusRcvd},
		{name: "normal with reason", payload: closePayload(StatusNormalClosure, "bye"), wantCode: StatusNormalClosure, reason: "bye"},
		{name: "1014", payload: closePayload(1014, ""), wantCode: 1014},
		{name: "private 4999", payload: closePayload(4999, "é"), wantCode: 4999, reason: "é"},
		{name: "registered 3000", payload: closePayload(3000, "x"), wantCode: 3000, reason: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := acceptConn(t, nil)
			p.send(wireFrame(true, 0, OpClose, true, tt.payload))
			_, _, err := c.ReadMessage(nil)
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != tt.wantCode || ce.Reason != tt.reason {
				t.Fatalf("ReadMessage error %v, want *CloseError{%d, %q}", err, tt.wantCode, tt.reason)
			}
			if CloseStatus(err) != tt.wantCode {
				t.Errorf("CloseStatus = %d, want %d", CloseStatus(err), tt.wantCode)
			}
			if code, _ := p.readClose(); code != tt.wantCode {
				t.Errorf("echoed close code %d, want %d", code, tt.wantCode)
			}
			p.expectEOF()
			if err := c.Write(c.AppendFrame(nil, OpText, nil)); !errors.Is(err, ErrClosed) {
				t.Errorf("Write after the close = %v, want ErrClosed", err)
			}
		})
	}
}

// TestCloseHandshakeRaw has the server start the close: it sends its
// code, and when the peer answers, ReadMessage reports the answer and the
// TCP connection is closed. Pings and data the peer sent before it saw
// the close frame do not cut the handshake short.
func TestCloseHandshakeRaw(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		before [][]byte // frames the peer sends before its close
	}{
		{name: "direct answer"},
		{name: "ping before the answer", before: [][]byte{masked(true, 0, OpPing, "late")}},
		{name: "data before the answer", before: [][]byte{masked(true, 0, OpText, "in flight")}},
		{name: "pong before the answer", before: [][]byte{masked(true, 0, OpPong, "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, p := acceptConn(t, nil)
			if err := c.Close(4001, "done"); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if code, reason := p.readClose(); code != 4001 || reason != "done" {
				t.Fatalf("close frame %d %q, want 4001 done", code, reason)
			}
			p.send(append(bytes.Join(tt.before, nil), closeFrame(4001, "done", true)...))
			var err error
			for range len(tt.before) + 1 {
				if _, _, err = c.ReadMessage(nil); err != nil {
					break
				}
			}
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != 4001 || ce.Reason != "done" {
				t.Fatalf("ReadMessage error %v, want *CloseError{4001, done}", err)
			}
			p.expectEOF()
			if _, err := c.nc.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
				t.Errorf("underlying connection still open: Read = %v", err)
			}
		})
	}
}

//go:build !js

package websocket

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every wait on the network; tests finish long before.
const testTimeout = 10 * time.Second

// testKey is the masking key of the frames the tests lay out by hand: the
// one in RFC 6455 section 5.7.
var testKey = [4]byte{0x37, 0xfa, 0x21, 0x3d}

// wireFrame lays out one frame byte by byte, independently of the
// package's encoder: first byte fin|rsv|op (rsv given in place, e.g.
// 0x40 for RSV1), then the length, then the masking key when masked.
func wireFrame(fin bool, rsv byte, op Opcode, masked bool, payload []byte) []byte {
	b0 := rsv | byte(op)
	if fin {
		b0 |= 0x80
	}
	var mb byte
	if masked {
		mb = 0x80
	}
	b := []byte{b0}
	switch n := len(payload); {
	case n <= 125:
		b = append(b, mb|byte(n))
	case n <= 0xFFFF:
		b = append(b, mb|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, mb|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if !masked {
		return append(b, payload...)
	}
	b = append(b, testKey[:]...)
	for i, c := range payload {
		b = append(b, c^testKey[i%4])
	}
	return b
}

// closePayload is a close frame's payload: code then reason.
func closePayload(code StatusCode, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

// rawFrame is a frame as read off the wire by a raw peer.
type rawFrame struct {
	fin     bool
	rsv     byte
	op      Opcode
	masked  bool
	payload []byte
}

// rawPeer is the far end of a connection, speaking the protocol by hand.
type rawPeer struct {
	tb     testing.TB
	nc     net.Conn
	br     *bufio.Reader
	client bool // it masks the frames it sends
}

// send writes the frames as one TCP write.
func (p *rawPeer) send(frames ...[]byte) {
	p.tb.Helper()
	p.nc.SetWriteDeadline(time.Now().Add(testTimeout))
	if _, err := p.nc.Write(bytes.Join(frames, nil)); err != nil {
		p.tb.Fatalf("raw peer write: %v", err)
	}
}

// frame is a final frame as this peer sends it (masked when a client).
func (p *rawPeer) frame(op Opcode, payload []byte) []byte {
	return wireFrame(true, 0, op, p.client, payload)
}

// readFrame reads one frame, unmasking it.
func (p *rawPeer) readFrame() rawFrame {
	p.tb.Helper()
	f, err := p.tryReadFrame()
	if err != nil {
		p.tb.Fatalf("raw peer read: %v", err)
	}
	return f
}

func (p *rawPeer) tryReadFrame() (rawFrame, error) {
	p.nc.SetReadDeadline(time.Now().Add(testTimeout))
	return readRawFrame(p.br)
}

// readRawFrame reads one frame from r, independently of the package's
// decoder, and unmasks its payload.
func readRawFrame(r io.Reader) (rawFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return rawFrame{}, err
	}
	f := rawFrame{fin: h[0]&0x80 != 0, rsv: h[0] & 0x70, op: Opcode(h[0] & 0x0F), masked: h[1]&0x80 != 0}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(b[:])
	}
	var key [4]byte
	if f.masked {
		if _, err := io.ReadFull(r, key[:]); err != nil {
			return f, err
		}
	}
	if n > 64<<20 {
		return f, fmt.Errorf("frame of %d bytes", n)
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return f, err
	}
	if f.masked {
		for i := range f.payload {
			f.payload[i] ^= key[i%4]
		}
	}
	return f, nil
}

// readClose reads the next frame, which must be a close frame, and
// returns its code (1005 when empty) and reason.
func (p *rawPeer) readClose() (StatusCode, string) {
	p.tb.Helper()
	f := p.readFrame()
	if f.op != OpClose {
		p.tb.Fatalf("raw peer read opcode %d (payload %q), want a close frame", f.op, f.payload)
	}
	if f.masked == p.client {
		p.tb.Fatalf("close frame masked=%v, from a peer of the wrong role", f.masked)
	}
	switch len(f.payload) {
	case 0:
		return StatusNoStatusRcvd, ""
	case 1:
		p.tb.Fatalf("close frame with a 1-byte payload")
	}
	return StatusCode(binary.BigEndian.Uint16(f.payload)), string(f.payload[2:])
}

// expectEOF checks that the other side closed the TCP connection.
func (p *rawPeer) expectEOF() {
	p.tb.Helper()
	p.nc.SetReadDeadline(time.Now().Add(testTimeout))
	b, err := io.ReadAll(p.br)
	if err != nil && !isConnReset(err) {
		p.tb.Fatalf("raw peer: waiting for the connection to close: %v", err)
	}
	if len(b) > 0 {
		p.tb.Fatalf("raw peer: %d unexpected bytes before EOF: %q", len(b), b)
	}
}

// isConnReset reports a reset by the other side, which may close while
// this side's last bytes are unread.
func isConnReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// rfcAcceptKey computes Sec-WebSocket-Accept as RFC 6455 section 4.2.2
// defines it, independently of acceptKey.
func rfcAcceptKey(key string) string {
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(sum[:])
}

const sampleKey = "dGhlIHNhbXBsZSBub25jZQ==" // RFC 6455 section 1.3

// upgradeRequest is a valid upgrade request for host with extra header
// lines ("Name: value\r\n" each).
func upgradeRequest(host, extra string) string {
	return "GET /ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + sampleKey + "\r\n" + extra + "\r\n"
}

// roundTrip sends a raw HTTP request on a new connection to addr and
// returns the response with its body read, and the connection's reader
// (positioned after the response) for an upgraded connection.
func roundTrip(tb testing.TB, addr, req string, pipelined []byte) (*http.Response, []byte, *rawPeer) {
	tb.Helper()
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(testTimeout))
	if _, err := nc.Write(append([]byte(req), pipelined...)); err != nil {
		tb.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, &http.Request{Method: req[:strings.IndexByte(req, ' ')]})
	if err != nil {
		tb.Fatalf("reading the handshake response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("reading the response body: %v", err)
	}
	nc.SetDeadline(noDeadline)
	return resp, body, &rawPeer{tb: tb, nc: nc, br: br, client: true}
}

// acceptServer is an httptest server whose handler calls Accept; the
// accepted connections and the refusals come out of its channels.
type acceptServer struct {
	srv   *httptest.Server
	conns chan *Conn
	errs  chan error
}

func newAcceptServer(tb testing.TB, opts *AcceptOptions) *acceptServer {
	tb.Helper()
	s := &acceptServer{conns: make(chan *Conn, 16), errs: make(chan error, 16)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := Accept(w, r, opts)
		if err != nil {
			s.errs <- err
			return
		}
		s.conns <- c
	}))
	tb.Cleanup(func() {
		s.srv.Close()
		for {
			select {
			case c := <-s.conns:
				c.CloseNow()
			default:
				return
			}
		}
	})
	return s
}

func (s *acceptServer) addr() string { return s.srv.Listener.Addr().String() }

// conn returns the next accepted connection; the test owns it.
func (s *acceptServer) conn(tb testing.TB) *Conn {
	tb.Helper()
	select {
	case c := <-s.conns:
		tb.Cleanup(c.CloseNow)
		return c
	case err := <-s.errs:
		tb.Fatalf("Accept: %v", err)
	case <-time.After(testTimeout):
		tb.Fatal("no connection accepted")
	}
	return nil
}

// refusal returns the next error of Accept.
func (s *acceptServer) refusal(tb testing.TB) error {
	tb.Helper()
	select {
	case c := <-s.conns:
		c.CloseNow()
		tb.Fatal("Accept succeeded, want a refusal")
	case err := <-s.errs:
		return err
	case <-time.After(testTimeout):
		tb.Fatal("Accept did not return")
	}
	return nil
}

// acceptConn returns a server Conn made by Accept and the raw client that
// did the handshake.
func acceptConn(tb testing.TB, opts *AcceptOptions) (*Conn, *rawPeer) {
	tb.Helper()
	s := newAcceptServer(tb, opts)
	resp, _, p := roundTrip(tb, s.addr(), upgradeRequest(s.addr(), ""), nil)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		tb.Fatalf("handshake answered %s", resp.Status)
	}
	if got, want := resp.Header.Get("Sec-WebSocket-Accept"), rfcAcceptKey(sampleKey); got != want {
		tb.Fatalf("Sec-WebSocket-Accept %q, want %q", got, want)
	}
	return s.conn(tb), p
}

// rawServer listens on 127.0.0.1 and runs serve for each connection in a
// goroutine. Cleanup closes the listener and the connections and waits
// for the goroutines.
func rawServer(tb testing.TB, serve func(nc net.Conn, br *bufio.Reader)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Go(func() { serve(nc, bufio.NewReader(nc)) })
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// answerUpgrade reads an upgrade request and answers it with 101; edit,
// if not nil, may change the response headers. It returns the request.
func answerUpgrade(nc net.Conn, br *bufio.Reader, edit func(req *http.Request, h http.Header)) (*http.Request, error) {
	nc.SetDeadline(time.Now().Add(testTimeout))
	defer nc.SetDeadline(noDeadline)
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("Upgrade", "websocket")
	h.Set("Connection", "Upgrade")
	h.Set("Sec-WebSocket-Accept", rfcAcceptKey(req.Header.Get("Sec-WebSocket-Key")))
	if edit != nil {
		edit(req, h)
	}
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	h.Write(&b)
	b.WriteString("\r\n")
	_, err = nc.Write(b.Bytes())
	return req, err
}

// dialConn dials a raw server with opts and returns the client Conn and
// the raw server side, after a valid handshake.
func dialConn(tb testing.TB, opts *DialOptions) (*Conn, *rawPeer) {
	tb.Helper()
	peers := make(chan *rawPeer, 1)
	addr := rawServer(tb, func(nc net.Conn, br *bufio.Reader) {
		if _, err := answerUpgrade(nc, br, nil); err != nil {
			nc.Close()
		}
		peers <- &rawPeer{tb: tb, nc: nc, br: br}
	})
	ctx, cancel := contextWithTestTimeout()
	defer cancel()
	c, err := Dial(ctx, "ws://"+addr+"/ws", opts)
	if err != nil {
		tb.Fatalf("Dial: %v", err)
	}
	tb.Cleanup(c.CloseNow)
	return c, <-peers
}

// contextWithTestTimeout bounds a handshake in a test.
func contextWithTestTimeout() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), testTimeout)
}

// writeMessage frames p as one message and sends it on c.
func writeMessage(c *Conn, op Opcode, p []byte) error {
	return c.Write(c.AppendFrame(make([]byte, 0, MaxHeader+len(p)), op, p))
}

//go:build !js

package websocket

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// compress is a message compressed as RFC 7692 section 7.2.1 says, by
// compress/flate at its default level rather than the package's own
// code: the flushed stream without its last 4 bytes.
func compress(tb testing.TB, p []byte) []byte {
	tb.Helper()
	var b bytes.Buffer
	fw, _ := flate.NewWriter(&b, flate.DefaultCompression)
	fw.Write(p)
	fw.Flush()
	out := b.Bytes()
	if !bytes.HasSuffix(out, []byte{0, 0, 0xff, 0xff}) {
		tb.Fatalf("flushed stream ends in %x", out[len(out)-4:])
	}
	return out[:len(out)-4]
}

// decompress inflates a compressed payload as section 7.2.2 says.
func decompress(tb testing.TB, p []byte) []byte {
	tb.Helper()
	out, err := io.ReadAll(flate.NewReader(io.MultiReader(bytes.NewReader(p),
		strings.NewReader("\x00\x00\xff\xff\x01\x00\x00\xff\xff"))))
	if err != nil {
		tb.Fatalf("inflating %x: %v", p, err)
	}
	return out
}

// deflateAcceptConn is acceptConn with permessage-deflate negotiated.
func deflateAcceptConn(tb testing.TB, o *DeflateOptions) (*Conn, *rawPeer) {
	tb.Helper()
	if o == nil {
		o = &DeflateOptions{}
	}
	s := newAcceptServer(tb, &AcceptOptions{Deflate: o})
	req := upgradeRequest(s.addr(), "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n")
	resp, _, p := roundTrip(tb, s.addr(), req, nil)
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-WebSocket-Extensions") == "" {
		tb.Fatalf("handshake answered %s, extensions %q", resp.Status, resp.Header.Get("Sec-WebSocket-Extensions"))
	}
	return s.conn(tb), p
}

// deflateDialConn is dialConn with permessage-deflate negotiated.
func deflateDialConn(tb testing.TB, o *DeflateOptions) (*Conn, *rawPeer) {
	tb.Helper()
	peers := make(chan *rawPeer, 1)
	addr := rawServer(tb, func(nc net.Conn, br *bufio.Reader) {
		_, err := answerUpgrade(nc, br, func(_ *http.Request, h http.Header) {
			h.Set("Sec-WebSocket-Extensions", "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
		})
		if err != nil {
			nc.Close()
		}
		peers <- &rawPeer{tb: tb, nc: nc, br: br}
	})
	ctx, cancel := contextWithTestTimeout()
	defer cancel()
	c, err := Dial(ctx, "ws://"+addr+"/ws", &DialOptions{Deflate: o})
	if err != nil {
		tb.Fatalf("Dial: %v", err)
	}
	tb.Cleanup(c.CloseNow)
	return c, <-peers
}

// chatJSON is a JSON chat message of about 150 bytes, as the edge
// carries them.
const chatJSON = `{"action":"rtm/publish","id":42,"body":{"channel":"room.lobby","message":{"user":"alice","text":"see you at the standup in five minutes"}}}`

// TestDeflateRead sends compressed messages the ways RFC 7692 allows
// (Autobahn cases 12 and 13 in spirit) and checks each reads as what was
// compressed, with the connection usable after.
func TestDeflateRead(t *testing.T) {
	t.Parallel()
	long := []byte(strings.Repeat(chatJSON, 40))
	z := compress(t, long)
	third := len(z) / 3
	tests := []struct {
		name   string
		frames func(p *rawPeer) [][]byte
		op     Opcode
		want   []byte
	}{
		{name: "text in one frame", op: OpText, want: []byte(chatJSON), frames: func(p *rawPeer) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpText, p.client, compress(t, []byte(chatJSON)))}
		}},
		{name: "binary in one frame", op: OpBinary, want: long, frames: func(p *rawPeer) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpBinary, p.client, z)}
		}},
		{name: "fragments", op: OpText, want: long, frames: func(p *rawPeer) [][]byte {
			return [][]byte{
				wireFrame(false, 0x40, OpText, p.client, z[:third]),
				wireFrame(false, 0, OpContinuation, p.client, z[third:2*third]),
				wireFrame(true, 0, OpContinuation, p.client, z[2*third:]),
			}
		}},
		{name: "control frames between fragments", op: OpBinary, want: long, frames: func(p *rawPeer) [][]byte {
			return [][]byte{
				wireFrame(false, 0x40, OpBinary, p.client, z[:third]),
				wireFrame(true, 0, OpPing, p.client, []byte("between")),
				wireFrame(false, 0, OpContinuation, p.client, z[third:2*third]),
				wireFrame(true, 0, OpPong, p.client, nil),
				wireFrame(true, 0, OpContinuation, p.client, z[2*third:]),
			}
		}},
		{name: "empty fragments", op: OpText, want: []byte(chatJSON), frames: func(p *rawPeer) [][]byte {
			return [][]byte{
				wireFrame(false, 0x40, OpText, p.client, nil),
				wireFrame(false, 0, OpContinuation, p.client, compress(t, []byte(chatJSON))),
				wireFrame(true, 0, OpContinuation, p.client, nil),
			}
		}},
		{name: "empty message", op: OpText, want: []byte{}, frames: func(p *rawPeer) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpText, p.client, []byte{0x00})}
		}},
		{name: "ends in a final block", op: OpText, want: []byte("final"), frames: func(p *rawPeer) [][]byte {
			var b bytes.Buffer
			fw, _ := flate.NewWriter(&b, flate.BestSpeed)
			fw.Write([]byte("final"))
			fw.Close()
			return [][]byte{wireFrame(true, 0x40, OpText, p.client, b.Bytes())}
		}},
		{name: "uncompressed beside compressed", op: OpText, want: []byte("plain"), frames: func(p *rawPeer) [][]byte {
			return [][]byte{wireFrame(true, 0, OpText, p.client, []byte("plain"))}
		}},
		{name: "invalid UTF-8 text, delivered as when uncompressed", op: OpText, want: []byte("caf\xc3("), frames: func(p *rawPeer) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpText, p.client, compress(t, []byte("caf\xc3(")))}
		}},
	}
	for _, side := range []string{"server", "client"} {
		for _, tt := range tests {
			t.Run(side+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				c, p := deflatePair(t, side, nil)
				p.send(tt.frames(p)...)
				p.send(wireFrame(true, 0x40, OpText, p.client, compress(t, []byte("next"))))
				op, msg, err := c.ReadMessage(nil)
				if err != nil || op != tt.op || !bytes.Equal(msg, tt.want) {
					t.Fatalf("ReadMessage = %d, %.60q, %v; want %d, %.60q", op, msg, err, tt.op, tt.want)
				}
				if _, msg, err = c.ReadMessage(msg); err != nil || string(msg) != "next" {
					t.Fatalf("next ReadMessage = %q, %v", msg, err)
				}
			})
		}
	}
}

// deflatePair returns a Conn of the side named, with deflate negotiated,
// and the raw peer facing it.
func deflatePair(tb testing.TB, side string, o *DeflateOptions) (*Conn, *rawPeer) {
	if o == nil {
		o = &DeflateOptions{}
	}
	if side == "client" {
		return deflateDialConn(tb, o)
	}
	return deflateAcceptConn(tb, o)
}

// TestDeflateViolations sends what RFC 7692 forbids, or what does not
// inflate, and checks the close code of each.
func TestDeflateViolations(t *testing.T) {
	t.Parallel()
	z := compress(t, []byte(strings.Repeat(chatJSON, 4)))
	tests := []struct {
		name   string
		limit  int64
		frames func(client bool) [][]byte
		want   StatusCode
	}{
		{name: "RSV1 on a continuation frame", want: StatusProtocolError, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(false, 0x40, OpText, m, z[:10]), wireFrame(true, 0x40, OpContinuation, m, z[10:])}
		}},
		{name: "RSV1 on an uncompressed message's continuation", want: StatusProtocolError, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(false, 0, OpText, m, []byte("ab")), wireFrame(true, 0x40, OpContinuation, m, []byte("cd"))}
		}},
		{name: "RSV1 on a ping", want: StatusProtocolError, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpPing, m, nil)}
		}},
		{name: "RSV2", want: StatusProtocolError, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x60, OpText, m, z)}
		}},
		{name: "reserved block type", want: StatusInvalidPayload, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpText, m, []byte{0xff, 0xff, 0xff})}
		}},
		{name: "cut off", want: StatusInvalidPayload, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpBinary, m, z[:len(z)/2])}
		}},
		{name: "bad stored block length", want: StatusInvalidPayload, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpBinary, m, []byte{0x00, 0x05, 0x00, 0x00, 0x00, 'x'})}
		}},
		{name: "bytes after a final block", want: StatusInvalidPayload, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpText, m, []byte{0x03, 0x00, 0x00, 0x00, 0xff, 0xff})}
		}},
		{name: "bad data in fragments", want: StatusInvalidPayload, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(false, 0x40, OpText, m, z[:5]), wireFrame(true, 0, OpContinuation, m, []byte{0xff, 0xff})}
		}},
		{name: "inflates past the limit", limit: 200, want: StatusMessageTooBig, frames: func(m bool) [][]byte {
			return [][]byte{wireFrame(true, 0x40, OpText, m, compress(t, make([]byte, 201)))}
		}},
	}
	for _, side := range []string{"server", "client"} {
		for _, tt := range tests {
			t.Run(side+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				c, p := deflatePair(t, side, nil)
				testViolation(t, c, p, violation{name: tt.name, limit: tt.limit, frames: tt.frames(p.client), want: tt.want})
			})
		}
	}
}

// TestDeflateAtLimit reads a message that inflates to exactly the read
// limit: it is not too big.
func TestDeflateAtLimit(t *testing.T) {
	t.Parallel()
	c, p := deflateAcceptConn(t, nil)
	c.SetReadLimit(1000)
	want := bytes.Repeat([]byte("0123456789"), 100)
	p.send(wireFrame(true, 0x40, OpBinary, true, compress(t, want)))
	if _, msg, err := c.ReadMessage(nil); err != nil || !bytes.Equal(msg, want) {
		t.Fatalf("ReadMessage = %d bytes, %v; want the 1000", len(msg), err)
	}
}

// TestDeflateBomb sends 16 KiB that inflate to 16 MiB to a connection
// whose read limit is 64 KiB: it is closed 1009 having inflated, and
// allocated, about the limit, not the bomb. Not parallel, so that the
// allocations counted are the read's.
func TestDeflateBomb(t *testing.T) {
	const limit, bomb = 64 << 10, 16 << 20
	c, p := deflateAcceptConn(t, nil)
	c.SetReadLimit(limit)
	// Flushed deflate blocks concatenate: 16 times 1 MiB of zeros.
	mib := append(compress(t, make([]byte, 1<<20)), 0, 0, 0xff, 0xff)
	z := bytes.Repeat(mib, bomb>>20)
	frame := wireFrame(true, 0x40, OpBinary, true, z)
	read := make(chan error, 1)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var dst []byte
	go func() {
		var err error
		_, dst, err = c.ReadMessage(nil)
		read <- err
	}()
	p.send(frame)
	if code, _ := p.readClose(); code != StatusMessageTooBig {
		t.Errorf("close code %d, want 1009", code)
	}
	p.send(closeFrame(StatusMessageTooBig, "", true))
	p.nc.(*net.TCPConn).CloseWrite()
	var pe *ProtocolError
	if err := <-read; !errors.As(err, &pe) || pe.Code != StatusMessageTooBig {
		t.Fatalf("ReadMessage error %v, want a *ProtocolError 1009", err)
	}
	runtime.ReadMemStats(&after)
	if cap(dst) > 2*limit {
		t.Errorf("the message buffer grew to %d bytes for a limit of %d", cap(dst), limit)
	}
	// Generous: the pools' first flate reader and buffers, the test's
	// own frames; a 16 MiB inflation shows at once.
	if n := after.TotalAlloc - before.TotalAlloc; n > 4<<20 {
		t.Errorf("reading the bomb allocated %d bytes", n)
	}
}

// TestDeflateWrite checks what AppendFrame sends once deflate is
// negotiated: messages below the threshold, and those that do not
// shrink, go as they are (RSV1 clear); the rest compressed, with RSV1 on
// their one frame, masked by a client, and inflating to the message.
func TestDeflateWrite(t *testing.T) {
	t.Parallel()
	incompressible := make([]byte, 300)
	for i := range incompressible {
		incompressible[i] = byte(i*7919>>3) ^ byte(i*31)
	}
	big := []byte(strings.Repeat(chatJSON, 30))
	tests := []struct {
		name       string
		threshold  int
		payload    []byte
		op         Opcode
		compressed bool
	}{
		{name: "below the default threshold", payload: []byte(chatJSON), op: OpText, compressed: false},
		{name: "above it", payload: big, op: OpText, compressed: true},
		{name: "binary", payload: big, op: OpBinary, compressed: true},
		{name: "every message", threshold: -1, payload: []byte(chatJSON), op: OpText, compressed: true},
		{name: "threshold 1 KiB", threshold: 1024, payload: big[:1023], op: OpText, compressed: false},
		{name: "at the threshold", threshold: 1024, payload: big[:1024], op: OpText, compressed: true},
		{name: "incompressible", threshold: -1, payload: incompressible, op: OpBinary, compressed: false},
		{name: "empty", threshold: -1, payload: nil, op: OpText, compressed: false},
	}
	for _, side := range []string{"server", "client"} {
		for _, tt := range tests {
			t.Run(side+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				c, p := deflatePair(t, side, &DeflateOptions{Threshold: tt.threshold})
				if err := c.Write(c.AppendFrame([]byte("kept"), tt.op, tt.payload)[4:]); err != nil {
					t.Fatal(err)
				}
				f := p.readFrame()
				if !f.fin || f.op != tt.op || f.masked != (side == "client") {
					t.Fatalf("frame fin %v op %d masked %v", f.fin, f.op, f.masked)
				}
				got := f.payload
				if tt.compressed {
					if f.rsv != 0x40 {
						t.Fatalf("rsv %#x, want RSV1", f.rsv)
					}
					if len(got) >= len(tt.payload) {
						t.Errorf("compressed to %d bytes from %d", len(got), len(tt.payload))
					}
					got = decompress(t, got)
				} else if f.rsv != 0 {
					t.Fatalf("rsv %#x, want none", f.rsv)
				}
				if !bytes.Equal(got, tt.payload) {
					t.Fatalf("payload %.60q, want %.60q", got, tt.payload)
				}
			})
		}
	}
}

// TestDeflateControlFrames checks that pings, pongs and the close frame
// are never compressed, whatever the threshold.
func TestDeflateControlFrames(t *testing.T) {
	t.Parallel()
	c, p := deflateAcceptConn(t, &DeflateOptions{Threshold: -1})
	if err := c.Ping(); err != nil {
		t.Fatal(err)
	}
	if f := p.readFrame(); f.op != OpPing || f.rsv != 0 {
		t.Fatalf("ping frame op %d rsv %#x", f.op, f.rsv)
	}
	c.Close(StatusNormalClosure, strings.Repeat("bye ", 20))
	if f := p.readFrame(); f.op != OpClose || f.rsv != 0 {
		t.Fatalf("close frame op %d rsv %#x", f.op, f.rsv)
	}
}

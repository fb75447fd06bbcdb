//go:build !js

package websocket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	cws "github.com/coder/websocket"
)

// These tests talk to github.com/coder/websocket, an independent
// implementation, in both roles.

const interopLimit = 2 << 20

func wsURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") }

// ourServer serves each connection accepted with opts by serve, in the
// handler's goroutine. Cleanup drops the connections and waits for the
// handlers.
func ourServer(tb testing.TB, opts *AcceptOptions, serve func(c *Conn)) string {
	return trackedServer(tb, func(w http.ResponseWriter, r *http.Request) (*Conn, error) {
		c, err := Accept(w, r, opts)
		if err == nil {
			c.SetReadLimit(interopLimit)
		}
		return c, err
	}, (*Conn).CloseNow, serve)
}

// coderServer is ourServer with coder/websocket accepting.
func coderServer(tb testing.TB, opts *cws.AcceptOptions, serve func(c *cws.Conn)) string {
	return trackedServer(tb, func(w http.ResponseWriter, r *http.Request) (*cws.Conn, error) {
		c, err := cws.Accept(w, r, opts)
		if err == nil {
			c.SetReadLimit(interopLimit)
		}
		return c, err
	}, func(c *cws.Conn) { c.CloseNow() }, serve)
}

// trackedServer runs serve on each connection accept opens, keeping the
// connections so that cleanup can drop them and wait for the handlers.
func trackedServer[C any](tb testing.TB, accept func(http.ResponseWriter, *http.Request) (C, error), closeNow func(C), serve func(C)) string {
	tb.Helper()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []C
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := accept(w, r)
		if err != nil {
			return
		}
		mu.Lock()
		conns = append(conns, c)
		wg.Add(1)
		mu.Unlock()
		defer wg.Done()
		defer closeNow(c)
		serve(c)
	}))
	tb.Cleanup(func() {
		srv.Close()
		mu.Lock()
		for _, c := range conns {
			closeNow(c)
		}
		mu.Unlock()
		wg.Wait()
	})
	return wsURL(srv)
}

// coderDial dials url with coder/websocket.
func coderDial(tb testing.TB, url string, opts *cws.DialOptions) *cws.Conn {
	tb.Helper()
	ctx, cancel := contextWithTestTimeout()
	defer cancel()
	c, _, err := cws.Dial(ctx, url, opts)
	if err != nil {
		tb.Fatalf("coder Dial: %v", err)
	}
	c.SetReadLimit(interopLimit)
	tb.Cleanup(func() { c.CloseNow() })
	return c
}

// ourDial dials url with Dial.
func ourDial(tb testing.TB, url string, opts *DialOptions) *Conn {
	tb.Helper()
	ctx, cancel := contextWithTestTimeout()
	defer cancel()
	c, err := Dial(ctx, url, opts)
	if err != nil {
		tb.Fatalf("Dial: %v", err)
	}
	c.SetReadLimit(interopLimit)
	tb.Cleanup(c.CloseNow)
	return c
}

// echo sends every message back until the connection ends.
func echo(c *Conn) {
	var buf []byte
	for {
		op, msg, err := c.ReadMessage(buf)
		if err != nil {
			return
		}
		buf = msg
		if err := writeMessage(c, op, msg); err != nil {
			return
		}
	}
}

func coderEcho(c *cws.Conn) {
	ctx := context.Background()
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
	}
}

// payload is n bytes of valid UTF-8 (multibyte runes where they fit)
// that differ from one position to the next.
func payload(n int) []byte {
	b := make([]byte, 0, n)
	for i := 0; len(b) < n; i++ {
		if r := rune(0x400 + i%200); len(b)+utf8.RuneLen(r) <= n && i%3 == 0 {
			b = utf8.AppendRune(b, r)
		} else {
			b = append(b, byte('a'+i%26))
		}
	}
	return b
}

var interopSizes = []int{0, 1, 125, 126, 127, 65535, 65536, 65537, 1 << 20}

// TestInteropMessages sends text and binary messages of the sizes at each
// length-encoding boundary through an echo in the other implementation,
// in both roles.
func TestInteropMessages(t *testing.T) {
	t.Parallel()
	t.Run("our server, coder client", func(t *testing.T) {
		t.Parallel()
		coderEchoes(t, coderDial(t, ourServer(t, nil, echo), nil), interopSizes)
	})
	t.Run("coder server, our client", func(t *testing.T) {
		t.Parallel()
		ourEchoes(t, ourDial(t, coderServer(t, nil, coderEcho), nil), interopSizes)
	})
}

// coderEchoes has coder's connection cc send a text and a binary message
// of each size to an echo and checks each echo, then closes it.
func coderEchoes(t *testing.T, cc *cws.Conn, sizes []int) {
	t.Helper()
	ctx := context.Background()
	for _, typ := range []cws.MessageType{cws.MessageText, cws.MessageBinary} {
		for _, n := range sizes {
			want := payload(n)
			if err := cc.Write(ctx, typ, want); err != nil {
				t.Fatalf("%v %d bytes: coder Write: %v", typ, n, err)
			}
			gotTyp, got, err := cc.Read(ctx)
			if err != nil || gotTyp != typ || !bytes.Equal(got, want) {
				t.Fatalf("%v %d bytes: echo is %v, %d bytes, %v", typ, n, gotTyp, len(got), err)
			}
		}
	}
	if err := cc.Close(cws.StatusNormalClosure, ""); err != nil {
		t.Errorf("coder Close: %v", err)
	}
}

// ourEchoes is coderEchoes with our connection c.
func ourEchoes(t *testing.T, c *Conn, sizes []int) {
	t.Helper()
	var buf []byte
	for _, op := range []Opcode{OpText, OpBinary} {
		for _, n := range sizes {
			want := payload(n)
			if err := writeMessage(c, op, want); err != nil {
				t.Fatalf("%d %d bytes: writeMessage: %v", op, n, err)
			}
			gotOp, got, err := c.ReadMessage(buf)
			if err != nil || gotOp != op || !bytes.Equal(got, want) {
				t.Fatalf("%d %d bytes: echo is %d, %d bytes, %v", op, n, gotOp, len(got), err)
			}
			buf = got
		}
	}
}

// batch is n messages of both types and assorted sizes.
func batch(n int) (ops []Opcode, payloads [][]byte) {
	for i := range n {
		p := fmt.Appendf(nil, "message %03d ", i)
		ops = append(ops, OpText+Opcode(i%2))
		payloads = append(payloads, append(p, payload(interopSizes[i%len(interopSizes)]%70000)...))
	}
	return ops, payloads
}

// appendBatch lays out the batch as frames, one buffer for one Write.
func appendBatch(c *Conn, dst []byte, ops []Opcode, payloads [][]byte) []byte {
	for i, p := range payloads {
		dst = c.AppendFrame(dst, ops[i], p)
	}
	return dst
}

// TestInteropBatch writes many frames laid out by AppendFrame with one
// Write: the peer reads them as separate messages, in order.
func TestInteropBatch(t *testing.T) {
	t.Parallel()
	ops, want := batch(60)
	n := len(ops)
	t.Run("our server, coder client", func(t *testing.T) {
		t.Parallel()
		url := ourServer(t, nil, func(c *Conn) {
			if _, _, err := c.ReadMessage(nil); err != nil { // "go"
				return
			}
			c.Write(appendBatch(c, nil, ops, want))
			c.ReadMessage(nil) // until the client closes
		})
		cc := coderDial(t, url, nil)
		ctx := context.Background()
		if err := cc.Write(ctx, cws.MessageText, []byte("go")); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			typ, got, err := cc.Read(ctx)
			if wantTyp := cws.MessageType(ops[i]); err != nil || typ != wantTyp || !bytes.Equal(got, want[i]) {
				t.Fatalf("message %d: %v %.20q, %v; want %v %.20q", i, typ, got, err, wantTyp, want[i])
			}
		}
	})
	t.Run("coder server, our client", func(t *testing.T) {
		t.Parallel()
		c := ourDial(t, coderServer(t, nil, coderEcho), nil)
		if err := c.Write(appendBatch(c, nil, ops, want)); err != nil {
			t.Fatal(err)
		}
		var msg []byte
		for i := range n {
			op, got, err := c.ReadMessage(msg)
			if wantOp := ops[i]; err != nil || op != wantOp || !bytes.Equal(got, want[i]) {
				t.Fatalf("message %d: %d %.20q, %v; want %d %.20q", i, op, got, err, wantOp, want[i])
			}
			msg = got
		}
	})
}

// TestInteropSubprotocol checks the negotiation: the server's preference
// wins, and a client that offers nothing the server speaks gets "".
func TestInteropSubprotocol(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		server []string
		client []string
		want   string
	}{
		{name: "server preference wins", server: []string{"v2.sluice", "v1.sluice"}, client: []string{"v1.sluice", "v2.sluice"}, want: "v2.sluice"},
		{name: "only common one", server: []string{"a", "b"}, client: []string{"c", "b"}, want: "b"},
		{name: "none offered", server: []string{"a"}, want: ""},
		{name: "server lacks the offered one", server: []string{"a", "b"}, client: []string{"c"}, want: ""},
		{name: "server speaks none", client: []string{"a"}, want: ""},
	}
	for _, tt := range tests {
		t.Run("our server/"+tt.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan string, 1)
			url := ourServer(t, &AcceptOptions{Subprotocols: tt.server}, func(c *Conn) { got <- c.Subprotocol() })
			cc := coderDial(t, url, &cws.DialOptions{Subprotocols: tt.client})
			if cc.Subprotocol() != tt.want || <-got != tt.want {
				t.Errorf("coder client got %q, want %q on both sides", cc.Subprotocol(), tt.want)
			}
		})
		t.Run("coder server/"+tt.name, func(t *testing.T) {
			t.Parallel()
			url := coderServer(t, &cws.AcceptOptions{Subprotocols: tt.server}, func(c *cws.Conn) {})
			c := ourDial(t, url, &DialOptions{Subprotocols: tt.client})
			if c.Subprotocol() != tt.want {
				t.Errorf("our client got %q, want %q", c.Subprotocol(), tt.want)
			}
		})
	}
}

// TestInteropPing checks pings both ways: coder's Ping returns once our
// reader answered, and the pong to our Ping is counted by Pongs.
func TestInteropPing(t *testing.T) {
	t.Parallel()
	t.Run("coder pings our server", func(t *testing.T) {
		t.Parallel()
		done := make(chan error, 1)
		url := ourServer(t, nil, func(c *Conn) {
			_, _, err := c.ReadMessage(nil)
			done <- err
		})
		cc := coderDial(t, url, nil)
		ctx := cc.CloseRead(context.Background())
		for i := range 3 {
			pctx, cancel := context.WithTimeout(ctx, testTimeout)
			err := cc.Ping(pctx)
			cancel()
			if err != nil {
				t.Fatalf("ping %d: %v", i, err)
			}
		}
		if err := cc.Close(cws.StatusNormalClosure, ""); err != nil {
			t.Errorf("coder Close: %v", err)
		}
		if err := <-done; CloseStatus(err) != StatusNormalClosure {
			t.Errorf("server ReadMessage = %v, want the close", err)
		}
	})
	t.Run("our client pings coder", func(t *testing.T) {
		t.Parallel()
		if err := pingThenAsk(ourDial(t, coderServer(t, nil, coderEcho), nil)); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("our server pings coder", func(t *testing.T) {
		t.Parallel()
		errs := make(chan error, 1)
		url := ourServer(t, nil, func(c *Conn) { errs <- pingThenAsk(c) })
		cc := coderDial(t, url, nil)
		go coderEcho(cc) // ends when the cleanup closes cc
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	})
}

// pingThenAsk pings, then sends a message the peer echoes: the peer wrote
// its pong before the echo, so the pong has been counted when the echo
// arrives.
func pingThenAsk(c *Conn) error {
	for i := range 3 {
		if err := c.Ping(); err != nil {
			return err
		}
		if err := writeMessage(c, OpText, []byte("after ping")); err != nil {
			return err
		}
		if _, msg, err := c.ReadMessage(nil); err != nil || string(msg) != "after ping" {
			return fmt.Errorf("ReadMessage = %q, %v", msg, err)
		}
		if got := c.Pongs(); got != uint64(i+1) {
			return fmt.Errorf("Pongs() = %d after %d pings", got, i+1)
		}
	}
	return nil
}

// TestInteropClose checks the closing handshake both ways in both roles:
// the code and reason reach the other side, the initiator sees its own
// code echoed, and our side's connection is closed afterwards.
func TestInteropClose(t *testing.T) {
	t.Parallel()
	const code, reason = 4000, "going to sleep"
	t.Run("our server closes, coder client", func(t *testing.T) {
		t.Parallel()
		done := make(chan error, 1)
		var nc net.Conn
		url := ourServer(t, nil, func(c *Conn) {
			nc = c.nc
			if err := c.Close(code, reason); err != nil {
				done <- err
				return
			}
			_, _, err := c.ReadMessage(nil)
			done <- err
		})
		cc := coderDial(t, url, nil)
		_, _, err := cc.Read(context.Background())
		var ce cws.CloseError
		if !errors.As(err, &ce) || ce.Code != code || ce.Reason != reason {
			t.Fatalf("coder Read = %v, want close %d %q", err, code, reason)
		}
		err = <-done
		if CloseStatus(err) != code {
			t.Fatalf("server ReadMessage = %v, want the echo of %d", err, code)
		}
		checkClosed(t, nc)
	})
	t.Run("coder client closes, our server", func(t *testing.T) {
		t.Parallel()
		done := make(chan error, 1)
		var nc net.Conn
		url := ourServer(t, nil, func(c *Conn) {
			nc = c.nc
			_, _, err := c.ReadMessage(nil)
			done <- err
		})
		cc := coderDial(t, url, nil)
		if err := cc.Close(code, reason); err != nil {
			t.Errorf("coder Close: %v (our echo not seen)", err)
		}
		var ce *CloseError
		if err := <-done; !errors.As(err, &ce) || ce.Code != code || ce.Reason != reason {
			t.Fatalf("server ReadMessage = %v, want close %d %q", err, code, reason)
		}
		checkClosed(t, nc)
	})
	t.Run("our client closes, coder server", func(t *testing.T) {
		t.Parallel()
		done := make(chan error, 1)
		url := coderServer(t, nil, func(c *cws.Conn) {
			_, _, err := c.Read(context.Background())
			done <- err
		})
		c := ourDial(t, url, nil)
		if err := c.Close(code, reason); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.ReadMessage(nil); CloseStatus(err) != code {
			t.Fatalf("client ReadMessage = %v, want the echo of %d", err, code)
		}
		var ce cws.CloseError
		if err := <-done; !errors.As(err, &ce) || ce.Code != code || ce.Reason != reason {
			t.Fatalf("coder Read = %v, want close %d %q", err, code, reason)
		}
		checkClosed(t, c.nc)
	})
	t.Run("coder server closes, our client", func(t *testing.T) {
		t.Parallel()
		done := make(chan error, 1)
		url := coderServer(t, nil, func(c *cws.Conn) {
			done <- c.Close(code, reason)
		})
		c := ourDial(t, url, nil)
		var ce *CloseError
		if _, _, err := c.ReadMessage(nil); !errors.As(err, &ce) || ce.Code != code || ce.Reason != reason {
			t.Fatalf("client ReadMessage = %v, want close %d %q", err, code, reason)
		}
		if err := <-done; err != nil {
			t.Errorf("coder Close: %v (our echo not seen)", err)
		}
		checkClosed(t, c.nc)
	})
}

// checkClosed asserts that our side closed its connection.
func checkClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	if _, err := nc.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
		t.Errorf("connection still open: Read = %v", err)
	}
}

// TestCloseReasonTruncated checks that a reason longer than a close frame
// holds (123 bytes) is cut at a rune boundary, so that the peer, which
// validates UTF-8, accepts it.
func TestCloseReasonTruncated(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		reason string
		want   string
	}{
		{name: "2-byte runes", reason: strings.Repeat("é", 100), want: strings.Repeat("é", 61)},
		{name: "3-byte runes, cut inside", reason: "a" + strings.Repeat("€", 50), want: "a" + strings.Repeat("€", 40)},
		{name: "4-byte runes", reason: strings.Repeat("😀", 40), want: strings.Repeat("😀", 30)},
		{name: "ASCII", reason: strings.Repeat("x", 200), want: strings.Repeat("x", 123)},
		{name: "exactly 123 bytes", reason: strings.Repeat("€", 41), want: strings.Repeat("€", 41)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := ourServer(t, nil, func(c *Conn) {
				c.Close(StatusPolicyViolation, tt.reason)
				c.ReadMessage(nil)
			})
			cc := coderDial(t, url, nil)
			_, _, err := cc.Read(context.Background())
			var ce cws.CloseError
			if !errors.As(err, &ce) || ce.Code != cws.StatusPolicyViolation {
				t.Fatalf("coder Read = %v, want close 1008", err)
			}
			if ce.Reason != tt.want || !utf8.ValidString(ce.Reason) {
				t.Errorf("reason %q (%d bytes), want %q (%d bytes)", ce.Reason, len(ce.Reason), tt.want, len(tt.want))
			}
		})
	}
}

//go:build !js

package websocket

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestDialRequest checks the upgrade request Dial sends, the subprotocol
// it reports, and that frames the server sends in the same write as its
// 101 response are not lost.
func TestDialRequest(t *testing.T) {
	t.Parallel()
	reqs := make(chan *http.Request, 1)
	addr := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		req, err := answerUpgrade(nc, br, func(req *http.Request, h http.Header) {
			h.Set("Sec-WebSocket-Protocol", "b")
		})
		if err != nil {
			close(reqs)
			return
		}
		reqs <- req
	})
	ctx, cancel := contextWithTestTimeout()
	defer cancel()
	c, err := Dial(ctx, "ws://"+addr+"/ws?x=1", &DialOptions{
		Subprotocols: []string{"a", "b"},
		Header:       http.Header{"Authorization": {"Bearer t"}},
	})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.CloseNow()
	req := <-reqs
	if req == nil {
		t.Fatal("the server did not get the request")
	}
	checks := []struct{ name, got, want string }{
		{"method", req.Method, "GET"},
		{"request URI", req.RequestURI, "/ws?x=1"},
		{"Host", req.Host, addr},
		{"Upgrade", req.Header.Get("Upgrade"), "websocket"},
		{"Connection", req.Header.Get("Connection"), "Upgrade"},
		{"Sec-WebSocket-Version", req.Header.Get("Sec-WebSocket-Version"), "13"},
		{"Sec-WebSocket-Protocol", req.Header.Get("Sec-WebSocket-Protocol"), "a, b"},
		{"Authorization", req.Header.Get("Authorization"), "Bearer t"},
		{"Subprotocol()", c.Subprotocol(), "b"},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %q, want %q", ck.name, ck.got, ck.want)
		}
	}
	if k, err := base64.StdEncoding.DecodeString(req.Header.Get("Sec-WebSocket-Key")); err != nil || len(k) != 16 {
		t.Errorf("Sec-WebSocket-Key %q is not 16 bytes in base64", req.Header.Get("Sec-WebSocket-Key"))
	}
}

// TestDialFramesBehindResponse has the server send frames in the same
// write as its 101 response: Dial must not lose them.
func TestDialFramesBehindResponse(t *testing.T) {
	t.Parallel()
	addr := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			rfcAcceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n"
		b := append([]byte(resp), unmasked(true, 0, OpText, "one")...)
		b = append(b, unmasked(true, 0, OpBinary, strings.Repeat("2", 9000))...)
		nc.Write(b)
		io.Copy(io.Discard, br) // until the client closes
	})
	ctx, cancel := contextWithTestTimeout()
	defer cancel()
	c, err := Dial(ctx, "ws://"+addr, &DialOptions{ReadBufferSize: 512})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.CloseNow()
	for _, want := range []string{"one", strings.Repeat("2", 9000)} {
		_, msg, err := c.ReadMessage(nil)
		if err != nil || string(msg) != want {
			t.Fatalf("ReadMessage = %.20q (%d bytes), %v; want %.20q", msg, len(msg), err, want)
		}
	}
}

// TestDialRefused checks that a server's refusal comes back as a
// *HandshakeError carrying the status and the start of the body, which is
// how a client learns why (an expired token, say).
func TestDialRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name     string
		status   int
		body     string
		wantBody string
	}{
		{name: "401 JSON", status: http.StatusUnauthorized, body: `{"error":"token expired"}`, wantBody: `{"error":"token expired"}`},
		{name: "503 empty", status: http.StatusServiceUnavailable},
		{name: "403 long body cut to 1 KiB", status: http.StatusForbidden, body: long, wantBody: long[:1024]},
		{name: "200 instead of 101", status: http.StatusOK, body: "hello", wantBody: "hello"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tt.status)
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			ctx, cancel := contextWithTestTimeout()
			defer cancel()
			c, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
			var he *HandshakeError
			if !errors.As(err, &he) {
				if c != nil {
					c.CloseNow()
				}
				t.Fatalf("Dial error %v, want a *HandshakeError", err)
			}
			if want := fmt.Sprintf("%d %s", tt.status, http.StatusText(tt.status)); he.StatusCode != tt.status || he.Status != want {
				t.Errorf("HandshakeError status %d %q, want %d %q", he.StatusCode, he.Status, tt.status, want)
			}
			if string(he.Body) != tt.wantBody {
				t.Errorf("HandshakeError body %.40q (%d bytes), want %.40q (%d bytes)", he.Body, len(he.Body), tt.wantBody, len(tt.wantBody))
			}
		})
	}
}

// TestDialBadResponse has a server answer 101 with a response a client
// must not trust: Dial fails and closes the connection.
func TestDialBadResponse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		offer  []string
		edit   func(req *http.Request, h http.Header)
		substr string // in the error
	}{
		{name: "wrong accept", edit: func(_ *http.Request, h http.Header) {
			h.Set("Sec-WebSocket-Accept", rfcAcceptKey(sampleKey))
		}, substr: "Sec-WebSocket-Accept"},
		{name: "no accept", edit: func(_ *http.Request, h http.Header) { h.Del("Sec-WebSocket-Accept") }, substr: "Sec-WebSocket-Accept"},
		{name: "accept of the raw key", edit: func(req *http.Request, h http.Header) {
			h.Set("Sec-WebSocket-Accept", req.Header.Get("Sec-WebSocket-Key"))
		}, substr: "Sec-WebSocket-Accept"},
		{name: "no Upgrade", edit: func(_ *http.Request, h http.Header) { h.Del("Upgrade") }, substr: "Upgrade"},
		{name: "no Connection", edit: func(_ *http.Request, h http.Header) { h.Del("Connection") }, substr: "Connection"},
		{name: "subprotocol when none offered", edit: func(_ *http.Request, h http.Header) {
			h.Set("Sec-WebSocket-Protocol", "chat")
		}, substr: "not offered"},
		{name: "subprotocol not offered", offer: []string{"a", "b"}, edit: func(_ *http.Request, h http.Header) {
			h.Set("Sec-WebSocket-Protocol", "c")
		}, substr: "not offered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			closed := make(chan error, 1)
			addr := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
				if _, err := answerUpgrade(nc, br, tt.edit); err != nil {
					closed <- err
					return
				}
				nc.SetReadDeadline(time.Now().Add(testTimeout))
				_, err := io.Copy(io.Discard, br)
				closed <- err
			})
			ctx, cancel := contextWithTestTimeout()
			defer cancel()
			c, err := Dial(ctx, "ws://"+addr, &DialOptions{Subprotocols: tt.offer})
			if err == nil {
				c.CloseNow()
				t.Fatal("Dial succeeded")
			}
			var he *HandshakeError
			if errors.As(err, &he) || !strings.Contains(err.Error(), tt.substr) {
				t.Errorf("Dial error %q, want a plain error mentioning %q", err, tt.substr)
			}
			if err := <-closed; err != nil {
				t.Errorf("the client did not close the connection: %v", err)
			}
		})
	}
}

// TestDialContext has a server that accepts and never answers: Dial must
// give up when its context ends, promptly, with an error wrapping the
// context's, and close the connection.
func TestDialContext(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ctx  func(got <-chan struct{}) (context.Context, context.CancelFunc)
		want error
	}{
		{name: "cancel", want: context.Canceled, ctx: func(got <-chan struct{}) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			go func() { <-got; cancel() }() // ends: got is closed by the server
			return ctx, cancel
		}},
		{name: "deadline", want: context.DeadlineExceeded, ctx: func(<-chan struct{}) (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := make(chan struct{})    // closed once the request arrived
			closed := make(chan error, 1) // the server's view of the end
			addr := rawServer(t, func(nc net.Conn, br *bufio.Reader) {
				nc.SetReadDeadline(time.Now().Add(testTimeout))
				_, err := http.ReadRequest(br)
				close(got)
				if err == nil {
					_, err = io.Copy(io.Discard, br) // never answers
				}
				closed <- err
			})
			ctx, cancel := tt.ctx(got)
			defer cancel()
			start := time.Now()
			c, err := Dial(ctx, "ws://"+addr, nil)
			if err == nil {
				c.CloseNow()
				t.Fatal("Dial succeeded")
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Dial error %v, want one wrapping %v", err, tt.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Dial took %v to notice the context", d)
			}
			if err := <-closed; err != nil {
				t.Errorf("the client did not close the connection: %v", err)
			}
		})
	}
}

// TestDialErrors covers failures before any handshake.
func TestDialErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "ws://" + ln.Addr().String()
	ln.Close()
	tests := []struct {
		name string
		url  string
	}{
		{name: "unsupported scheme", url: "ftp://127.0.0.1:1/"},
		{name: "unparsable", url: "ws://[::1"},
		{name: "connection refused", url: refused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := contextWithTestTimeout()
			defer cancel()
			c, err := Dial(ctx, tt.url, nil)
			if err == nil {
				c.CloseNow()
				t.Fatal("Dial succeeded")
			}
			if !strings.HasPrefix(err.Error(), "websocket") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

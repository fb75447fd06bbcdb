//go:build !js

package websocket

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// DialOptions configure a client's handshake.
type DialOptions struct {
	Subprotocols []string
	Header       http.Header
	// TLSConfig is used for wss URLs (default: the system's roots).
	TLSConfig *tls.Config
	// ReadBufferSize is the connection's read buffer (default 4 KiB).
	ReadBufferSize int
	// NetDial opens the TCP connection (default: a net.Dialer's).
	NetDial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Deflate, when set, offers permessage-deflate without context
	// takeover either way; the server may decline it. nil (the default)
	// offers nothing.
	Deflate *DeflateOptions
}

// HandshakeError is a server's refusal of the upgrade: its HTTP status
// and the start of its body.
type HandshakeError struct {
	Status     string
	StatusCode int
	Body       []byte // at most 1 KiB
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("websocket handshake refused: HTTP %s", e.Status)
}

// Dial opens a client connection to a ws:// or wss:// URL. ctx bounds the
// dial and the handshake only.
func Dial(ctx context.Context, rawURL string, opts *DialOptions) (*Conn, error) {
	if opts == nil {
		opts = &DialOptions{}
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("websocket dial: %w", err)
	}
	secure := false
	switch u.Scheme {
	case "ws", "http":
	case "wss", "https":
		secure = true
	default:
		return nil, fmt.Errorf("websocket dial: unsupported scheme %q", u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if secure {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	dial := opts.NetDial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("websocket dial: %w", err)
	}
	if secure {
		cfg := opts.TLSConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, fmt.Errorf("websocket dial: TLS: %w", err)
		}
		nc = tc
	}
	c, err := handshake(ctx, nc, u, opts)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// handshake sends the upgrade request on nc and checks the answer.
func handshake(ctx context.Context, nc net.Conn, u *url.URL, opts *DialOptions) (*Conn, error) {
	// Only ctx's end interrupts the exchange, not a deadline of the same
	// instant: ctx.Err is set before AfterFunc runs, so the error below
	// always wraps the context's.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(pastDeadline) })
	c, err := exchange(nc, u, opts)
	if err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("websocket handshake: %w", ctx.Err())
	}
	if !stop() && err == nil {
		// ctx ended as the handshake finished: the deadline may be past.
		return nil, fmt.Errorf("websocket handshake: %w", ctx.Err())
	}
	return c, err
}

// exchange writes the upgrade request and reads the answer.
func exchange(nc net.Conn, u *url.URL, opts *DialOptions) (*Conn, error) {
	var nonce [16]byte
	rand.Read(nonce[:])
	key := base64.StdEncoding.EncodeToString(nonce[:])
	var b strings.Builder
	b.WriteString("GET ")
	b.WriteString(u.RequestURI())
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(u.Host)
	b.WriteString("\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ")
	b.WriteString(key)
	if len(opts.Subprotocols) > 0 {
		b.WriteString("\r\nSec-WebSocket-Protocol: ")
		b.WriteString(strings.Join(opts.Subprotocols, ", "))
	}
	if opts.Deflate != nil {
		b.WriteString("\r\nSec-WebSocket-Extensions: " + deflateOffer)
	}
	b.WriteString("\r\n")
	opts.Header.Write(&b) // drops invalid names, turns line breaks in values into spaces
	b.WriteString("\r\n")
	if _, err := io.WriteString(nc, b.String()); err != nil {
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}

	size := opts.ReadBufferSize
	if size <= 0 {
		size = 4 << 10
	}
	br := bufio.NewReaderSize(nc, size)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet, URL: u})
	if err != nil {
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		resp.Body.Close()
		return nil, &HandshakeError{Status: resp.Status, StatusCode: resp.StatusCode, Body: body}
	}
	switch {
	case !hasToken(resp.Header, "Upgrade", "websocket"), !hasToken(resp.Header, "Connection", "upgrade"):
		return nil, errors.New("websocket handshake: response lacks the Upgrade and Connection headers")
	case resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(key):
		return nil, errors.New("websocket handshake: wrong Sec-WebSocket-Accept")
	}
	sub := resp.Header.Get("Sec-WebSocket-Protocol")
	if sub != "" && !slices.ContainsFunc(opts.Subprotocols, func(o string) bool { return strings.EqualFold(o, sub) }) {
		return nil, fmt.Errorf("websocket handshake: server chose subprotocol %q, which was not offered", sub)
	}
	deflate, err := checkDeflateAnswer(resp.Header, opts.Deflate != nil)
	if err != nil {
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}
	c := newConn(nc, br, true, sub)
	if deflate {
		c.setDeflate(opts.Deflate)
	}
	return c, nil
}

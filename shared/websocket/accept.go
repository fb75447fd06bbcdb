//go:build !js

package websocket

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// keyGUID is appended to the client's key to form the accept value.
const keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptOptions configure the server's side of the handshake.
type AcceptOptions struct {
	// Subprotocols the server speaks, preferred first. The first one the
	// client also offers is chosen; none offered chooses "".
	Subprotocols []string
	// OriginPatterns are the hosts (path.Match patterns, e.g.
	// "*.example.com") a browser page may connect from besides the
	// request's own host.
	OriginPatterns []string
	// AnyOrigin accepts every Origin: for edges whose clients are
	// authenticated by other means.
	AnyOrigin bool
	// ReadBufferSize is the connection's read buffer (default 1 KiB);
	// larger messages are read straight into the caller's buffer.
	ReadBufferSize int
	// Deflate, when set, accepts a client's permessage-deflate offer;
	// nil (the default) declines every offer.
	Deflate *DeflateOptions
}

// ErrHandshake is wrapped by the errors of Accept that answered the
// request with an HTTP error.
var ErrHandshake = errors.New("websocket handshake refused")

// Accept upgrades the request to a WebSocket connection. On error it has
// written an HTTP error response, except when the hijack itself failed.
func Accept(w http.ResponseWriter, r *http.Request, opts *AcceptOptions) (*Conn, error) {
	if opts == nil {
		opts = &AcceptOptions{}
	}
	key, status, err := checkUpgrade(r)
	if err == nil {
		status, err = checkOrigin(r, opts)
	}
	if err != nil {
		if status == http.StatusUpgradeRequired {
			w.Header().Set("Sec-WebSocket-Version", "13")
		}
		http.Error(w, err.Error(), status)
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	sub := selectSubprotocol(r, opts.Subprotocols)
	ext := ""
	if opts.Deflate != nil {
		ext = acceptDeflate(r.Header)
	}

	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "websocket: cannot hijack the connection", http.StatusInternalServerError)
		return nil, fmt.Errorf("websocket hijack: %w", err)
	}
	// The server's read and idle timeouts are for HTTP requests, not for
	// a connection that lives for hours: net/http clears the deadlines it
	// set when it hands the connection over, but its documentation leaves
	// that to the caller ("may have read or write deadlines already set").
	if err := nc.SetDeadline(noDeadline); err != nil {
		nc.Close()
		return nil, fmt.Errorf("websocket hijack: clear deadlines: %w", err)
	}
	resp := handshakeResponse(key, sub, ext)
	if _, err := nc.Write(resp); err != nil {
		nc.Close()
		return nil, fmt.Errorf("websocket handshake: %w", err)
	}

	// A client may send frames right behind its request; net/http may
	// have buffered them. The server's 4 KiB buffers are dropped so that
	// an idle connection holds only its own small one.
	size := opts.ReadBufferSize
	if size <= 0 {
		size = 1 << 10
	}
	var src io.Reader = nc
	if n := brw.Reader.Buffered(); n > 0 {
		pending, _ := brw.Reader.Peek(n)
		src = io.MultiReader(bytes.NewReader(bytes.Clone(pending)), nc)
	}
	c := newConn(nc, bufio.NewReaderSize(src, size), false, sub)
	if ext != "" {
		c.setDeflate(opts.Deflate)
	}
	return c, nil
}

// handshakeResponse is the 101 answer to an upgrade with the client's
// key, and the subprotocol and extensions chosen ("" for none).
func handshakeResponse(key, sub, ext string) []byte {
	resp := make([]byte, 0, 256)
	resp = append(resp, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	resp = append(resp, acceptKey(key)...)
	if sub != "" {
		resp = append(resp, "\r\nSec-WebSocket-Protocol: "...)
		resp = append(resp, sub...)
	}
	if ext != "" {
		resp = append(resp, "\r\nSec-WebSocket-Extensions: "...)
		resp = append(resp, ext...)
	}
	return append(resp, "\r\n\r\n"...)
}

// checkUpgrade validates the upgrade request; it returns the client's key
// or the HTTP status and reason to refuse it with.
func checkUpgrade(r *http.Request) (string, int, error) {
	switch {
	case r.Method != http.MethodGet:
		return "", http.StatusMethodNotAllowed, fmt.Errorf("WebSocket upgrade must use GET, not %s", r.Method)
	case !hasToken(r.Header, "Connection", "upgrade"):
		return "", http.StatusUpgradeRequired, errors.New(`missing "Connection: Upgrade" header`)
	case !hasToken(r.Header, "Upgrade", "websocket"):
		return "", http.StatusUpgradeRequired, errors.New(`missing "Upgrade: websocket" header`)
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return "", http.StatusUpgradeRequired, errors.New("unsupported Sec-WebSocket-Version: want 13")
	}
	key := strings.TrimSpace(r.Header.Get("Sec-WebSocket-Key"))
	if b, err := base64.StdEncoding.DecodeString(key); err != nil || len(b) != 16 {
		return "", http.StatusBadRequest, errors.New("invalid Sec-WebSocket-Key: want 16 bytes in base64")
	}
	return key, 0, nil
}

// OriginAllowed reports whether Accept would let a browser page of the
// request's Origin open a WebSocket: the same test, for responses a
// server sends such a page without upgrading (a refusal it should be able
// to read, with CORS). A request without Origin is not from a page.
func OriginAllowed(r *http.Request, opts *AcceptOptions) bool {
	if opts == nil {
		opts = &AcceptOptions{}
	}
	status, _ := checkOrigin(r, opts)
	return status == 0
}

// checkOrigin refuses a browser page from a host the server does not
// allow (cross-site WebSocket hijacking).
func checkOrigin(r *http.Request, opts *AcceptOptions) (int, error) {
	origin := r.Header.Get("Origin")
	if origin == "" || opts.AnyOrigin {
		return 0, nil
	}
	u, err := url.Parse(origin)
	if err != nil {
		return http.StatusBadRequest, fmt.Errorf("invalid Origin header %q", origin)
	}
	if strings.EqualFold(u.Host, r.Host) {
		return 0, nil
	}
	host := strings.ToLower(u.Host)
	for _, p := range opts.OriginPatterns {
		if ok, err := path.Match(strings.ToLower(p), host); err == nil && ok {
			return 0, nil
		}
	}
	return http.StatusForbidden, fmt.Errorf("request Origin %q is not authorized for Host %q", origin, r.Host)
}

// selectSubprotocol returns the first of the server's subprotocols the
// client offered.
func selectSubprotocol(r *http.Request, ours []string) string {
	offered := tokens(r.Header, "Sec-WebSocket-Protocol")
	for _, s := range ours {
		for _, o := range offered {
			if strings.EqualFold(s, o) {
				return s
			}
		}
	}
	return ""
}

// acceptKey is the Sec-WebSocket-Accept value for key.
func acceptKey(key string) string {
	sum := sha1.Sum([]byte(key + keyGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// tokens returns the comma-separated values of every h[name] line.
func tokens(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// hasToken reports whether header name lists token (case-insensitive).
func hasToken(h http.Header, name, token string) bool {
	for _, t := range tokens(h, name) {
		if strings.EqualFold(t, token) {
			return true
		}
	}
	return false
}

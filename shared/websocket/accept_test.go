//go:build !js

package websocket

import (
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestAcceptKey checks the accept value against the example in RFC 6455
// section 1.3.
func TestAcceptKey(t *testing.T) {
	t.Parallel()
	if got, want := acceptKey(sampleKey), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="; got != want {
		t.Fatalf("acceptKey(%q) = %q, want %q", sampleKey, got, want)
	}
}

// TestAcceptRefusals sends malformed upgrade requests: Accept must answer
// with the HTTP status a client can act on and return an error wrapping
// ErrHandshake.
func TestAcceptRefusals(t *testing.T) {
	t.Parallel()
	const (
		upgrade = "Upgrade: websocket\r\n"
		conn    = "Connection: Upgrade\r\n"
		version = "Sec-WebSocket-Version: 13\r\n"
		key     = "Sec-WebSocket-Key: " + sampleKey + "\r\n"
	)
	tests := []struct {
		name        string
		method      string
		headers     string
		want        int
		wantVersion bool // the response carries Sec-WebSocket-Version: 13
	}{
		{name: "POST", method: "POST", headers: upgrade + conn + version + key + "Content-Length: 0\r\n", want: http.StatusMethodNotAllowed},
		{name: "HEAD", method: "HEAD", headers: upgrade + conn + version + key, want: http.StatusMethodNotAllowed},
		{name: "no Upgrade", method: "GET", headers: conn + version + key, want: http.StatusUpgradeRequired, wantVersion: true},
		{name: "Upgrade h2c", method: "GET", headers: "Upgrade: h2c\r\n" + conn + version + key, want: http.StatusUpgradeRequired, wantVersion: true},
		{name: "no Connection", method: "GET", headers: upgrade + version + key, want: http.StatusUpgradeRequired, wantVersion: true},
		{name: "Connection keep-alive only", method: "GET", headers: upgrade + "Connection: keep-alive\r\n" + version + key, want: http.StatusUpgradeRequired, wantVersion: true},
		{name: "no version", method: "GET", headers: upgrade + conn + key, want: http.StatusUpgradeRequired, wantVersion: true},
		{name: "version 8", method: "GET", headers: upgrade + conn + "Sec-WebSocket-Version: 8\r\n" + key, want: http.StatusUpgradeRequired, wantVersion: true},
		{name: "no key", method: "GET", headers: upgrade + conn + version, want: http.StatusBadRequest},
		{name: "key not base64", method: "GET", headers: upgrade + conn + version + "Sec-WebSocket-Key: not base64!\r\n", want: http.StatusBadRequest},
		{name: "key of 15 bytes", method: "GET", headers: upgrade + conn + version + "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAA\r\n", want: http.StatusBadRequest},
		{name: "key of 17 bytes", method: "GET", headers: upgrade + conn + version + "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAAA=\r\n", want: http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newAcceptServer(t, nil)
			req := tt.method + " /ws HTTP/1.1\r\nHost: " + s.addr() + "\r\n" + tt.headers + "\r\n"
			resp, _, _ := roundTrip(t, s.addr(), req, nil)
			if resp.StatusCode != tt.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if got := resp.Header.Get("Sec-WebSocket-Version"); tt.wantVersion && got != "13" {
				t.Errorf("Sec-WebSocket-Version %q, want 13", got)
			}
			if err := s.refusal(t); !errors.Is(err, ErrHandshake) {
				t.Errorf("Accept error %v does not wrap ErrHandshake", err)
			}
		})
	}
}

// TestAcceptTokenLists checks that Connection and Upgrade are matched as
// case-insensitive token lists, as browsers and proxies send them.
func TestAcceptTokenLists(t *testing.T) {
	t.Parallel()
	s := newAcceptServer(t, nil)
	req := "GET /ws HTTP/1.1\r\nHost: " + s.addr() + "\r\nUpgrade: WebSocket\r\nConnection: keep-alive, UPGRADE\r\n" +
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: " + sampleKey + "\r\n\r\n"
	resp, _, _ := roundTrip(t, s.addr(), req, nil)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	s.conn(t)
}

// TestAcceptOrigin checks the cross-site check: a browser page from
// another host is refused unless OriginPatterns or AnyOrigin allow it.
func TestAcceptOrigin(t *testing.T) {
	t.Parallel()
	const sameHost = "SAME" // replaced by the server's host:port
	tests := []struct {
		name   string
		origin string // "" sends none
		opts   *AcceptOptions
		want   int
	}{
		{name: "no Origin", want: http.StatusSwitchingProtocols},
		{name: "same host", origin: "http://" + sameHost, want: http.StatusSwitchingProtocols},
		{name: "foreign", origin: "https://evil.example", want: http.StatusForbidden},
		{name: "same host name, other port", origin: "http://127.0.0.1:1", want: http.StatusForbidden},
		{name: "null", origin: "null", want: http.StatusForbidden},
		{name: "pattern match", origin: "https://app.example.com", opts: &AcceptOptions{OriginPatterns: []string{"*.example.com"}}, want: http.StatusSwitchingProtocols},
		{name: "pattern match, other case", origin: "https://APP.Example.com", opts: &AcceptOptions{OriginPatterns: []string{"*.example.COM"}}, want: http.StatusSwitchingProtocols},
		{name: "pattern miss", origin: "https://example.com", opts: &AcceptOptions{OriginPatterns: []string{"*.example.com"}}, want: http.StatusForbidden},
		{name: "pattern miss, suffix attack", origin: "https://app.example.com.evil.example", opts: &AcceptOptions{OriginPatterns: []string{"*.example.com"}}, want: http.StatusForbidden},
		{name: "exact pattern with port", origin: "http://localhost:3000", opts: &AcceptOptions{OriginPatterns: []string{"localhost:3000"}}, want: http.StatusSwitchingProtocols},
		{name: "AnyOrigin", origin: "https://evil.example", opts: &AcceptOptions{AnyOrigin: true}, want: http.StatusSwitchingProtocols},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newAcceptServer(t, tt.opts)
			extra := ""
			if tt.origin != "" {
				extra = "Origin: " + strings.Replace(tt.origin, sameHost, s.addr(), 1) + "\r\n"
			}
			resp, _, _ := roundTrip(t, s.addr(), upgradeRequest(s.addr(), extra), nil)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.want)
			}
			if tt.want == http.StatusSwitchingProtocols {
				s.conn(t)
			} else if err := s.refusal(t); !errors.Is(err, ErrHandshake) {
				t.Errorf("Accept error %v does not wrap ErrHandshake", err)
			}
		})
	}
}

// TestAcceptPipelinedFrames sends frames in the same TCP write as the
// upgrade request, as a client may: none may be lost, including one that
// net/http buffered only in part.
func TestAcceptPipelinedFrames(t *testing.T) {
	t.Parallel()
	s := newAcceptServer(t, nil)
	big := strings.Repeat("0123456789", 1000) // more than net/http's 4 KiB buffer
	pipelined := [][]byte{
		masked(true, 0, OpText, "first"),
		masked(true, 0, OpBinary, ""),
		masked(true, 0, OpText, big),
		masked(true, 0, OpText, "last"),
	}
	var all []byte
	for _, f := range pipelined {
		all = append(all, f...)
	}
	resp, _, _ := roundTrip(t, s.addr(), upgradeRequest(s.addr(), ""), all)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("status %d, want 101", resp.StatusCode)
	}
	c := s.conn(t)
	for _, want := range []string{"first", "", big, "last"} {
		_, msg, err := c.ReadMessage(nil)
		if err != nil || string(msg) != want {
			t.Fatalf("ReadMessage = %.20q (%d bytes), %v; want %.20q (%d bytes)", msg, len(msg), err, want, len(want))
		}
	}
}

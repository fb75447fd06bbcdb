package server_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
)

// logRecorder is a slog handler that hands each record, as its message
// and attributes in text, to a channel the test reads.
type logRecorder struct{ recs chan map[string]string }

func newLogRecorder() *logRecorder { return &logRecorder{recs: make(chan map[string]string, 256)} }

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]string{"msg": rec.Message}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.String()
		return true
	})
	select {
	case r.recs <- m:
	default: // never block the edge; the tests log far less than this holds
	}
	return nil
}

func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

// next returns the next record whose message is msg, failing after 5 s.
func (r *logRecorder) next(t *testing.T, msg string) map[string]string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case m := <-r.recs:
			if m["msg"] == msg {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q logged within 5s", msg)
		}
	}
}

// rawUpgrade opens a TCP connection to the edge and upgrades it by hand.
func rawUpgrade(t *testing.T, e *edge) *net.TCPConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", e.http.Listener.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = io.WriteString(nc, "GET /v2?appkey=test HTTP/1.1\r\nHost: edge\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	// The edge says nothing after the 101 until asked: the reader holds
	// no bytes of the connection beyond the response.
	resp, err := http.ReadResponse(bufio.NewReaderSize(nc, 16), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return nc.(*net.TCPConn)
}

// TestAbnormalCloseLogged: a client that goes away without a close frame
// (cutting a frame off, resetting the connection, or between frames) is
// logged with 1006 and what ended it, not as a normal closure; a client
// that closes properly is logged with its code.
func TestAbnormalCloseLogged(t *testing.T) {
	t.Parallel()
	// A masked text frame header claiming 2,000 bytes (key 0).
	header := []byte{0x81, 0x80 | 126, 0x07, 0xd0, 0, 0, 0, 0}
	halfFrame := append(header, make([]byte, 10)...)
	closeFrame := []byte{0x88, 0x80 | 2, 0, 0, 0, 0, 0x03, 0xe8} // 1000
	tests := []struct {
		name     string
		sent     []byte
		reset    bool // close with an RST (SO_LINGER 0) instead of a FIN
		code     string
		peerCode string
		kind     string
	}{
		{name: "eof mid-frame", sent: halfFrame, code: "1006", peerCode: "-1", kind: "eof mid-frame"},
		{name: "eof after a header", sent: header, code: "1006", peerCode: "-1", kind: "eof mid-frame"},
		{name: "reset mid-frame", sent: halfFrame, reset: true, code: "1006", peerCode: "-1", kind: "connection reset"},
		{name: "eof between frames", code: "1006", peerCode: "-1", kind: "eof without close frame"},
		{name: "close frame", sent: closeFrame, code: "1000", peerCode: "1000", kind: "peer closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			logs := newLogRecorder()
			e := startEdge(t, func(o *server.Options) { o.Logger = slog.New(logs) })
			nc := rawUpgrade(t, e)
			if _, err := nc.Write(tt.sent); err != nil {
				t.Fatal(err)
			}
			if tt.reset {
				if err := nc.SetLinger(0); err != nil {
					t.Fatal(err)
				}
			} else if tt.code == "1000" {
				// Wait for the edge's answer, so that closing does not
				// race it into a reset.
				var h [4]byte
				if _, err := io.ReadFull(nc, h[:]); err != nil {
					t.Fatalf("waiting for the close answer: %v", err)
				}
			}
			nc.Close()
			m := logs.next(t, "connection closed")
			if m["code"] != tt.code || m["peer_code"] != tt.peerCode || m["read_error"] != tt.kind {
				t.Fatalf("logged code=%s peer_code=%s read_error=%q, want code=%s peer_code=%s read_error=%q",
					m["code"], m["peer_code"], m["read_error"], tt.code, tt.peerCode, tt.kind)
			}
		})
	}
}

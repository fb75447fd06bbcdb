package stream

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/shared/websocket"
)

// Upgrade returns the server side of a WebSocket over t speaking
// subprotocol (a codec's name; "" for json). It runs the WebSocket
// package's own upgrade in process, over a request made up here, so
// that the session gets the very Conn type it always gets, with no
// change to the WebSocket package; the 101 it writes is t's first write,
// which t drops.
func Upgrade(t *Tunnel, subprotocol string) (*websocket.Conn, error) {
	r, err := http.NewRequest(http.MethodGet, "http://stream/v2", nil)
	if err != nil {
		return nil, fmt.Errorf("stream: upgrade: %w", err)
	}
	r.Header.Set("Connection", "Upgrade")
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Sec-WebSocket-Version", "13")
	r.Header.Set("Sec-WebSocket-Key", "c2x1aWNlLXN0cmVhbS0xNg==")
	if subprotocol != "" {
		r.Header.Set("Sec-WebSocket-Protocol", subprotocol)
	}
	w := &hijacker{t: t, header: http.Header{}}
	opts := &websocket.AcceptOptions{AnyOrigin: true}
	if subprotocol != "" {
		opts.Subprotocols = []string{subprotocol}
	}
	ws, err := websocket.Accept(w, r, opts)
	if err != nil {
		return nil, fmt.Errorf("stream: upgrade: %w: %s", err, strings.TrimSpace(w.body.String()))
	}
	return ws, nil
}

// hijacker is the ResponseWriter of the in-process upgrade: its Hijack
// hands over the tunnel.
type hijacker struct {
	t      *Tunnel
	header http.Header
	body   strings.Builder // an error the upgrade answered, for Upgrade's error
}

func (h *hijacker) Header() http.Header         { return h.header }
func (h *hijacker) Write(b []byte) (int, error) { return h.body.Write(b) }
func (h *hijacker) WriteHeader(int)             {}

// Hijack implements http.Hijacker.
func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return h.t, bufio.NewReadWriter(bufio.NewReaderSize(strings.NewReader(""), 16), nil), nil
}

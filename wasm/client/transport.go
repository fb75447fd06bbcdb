package client

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// transport is one WebSocket connection as the client uses it: whole
// messages in, whole messages out. It is the seam where a browser-specific
// implementation (syscall/js, in *_js.go files) can replace coder/websocket
// without touching the protocol code.
//
// Read is called by one goroutine at a time; Write, Ping and Close may be
// called concurrently with Read and with each other.
type transport interface {
	// Read returns the next message.
	Read(ctx context.Context) ([]byte, error)
	// Write sends one message, binary or text.
	Write(ctx context.Context, binary bool, p []byte) error
	// Ping checks that the peer is still there; browsers cannot send
	// pings, so it may do nothing there.
	Ping(ctx context.Context) error
	// Close closes with a status code and reason, waiting briefly for the
	// peer's close frame.
	Close(code int, reason string) error
	// Subprotocol is the subprotocol the server chose, "" for none.
	Subprotocol() string
}

// dialConfig is what a transport dialer needs beyond the URL.
type dialConfig struct {
	subprotocols []string
	header       http.Header // not settable in browsers; ignored there
}

// dialFunc opens a transport; Client.dial defaults to dialWebSocket and
// tests may replace it.
type dialFunc func(ctx context.Context, url string, cfg dialConfig) (transport, error)

// readLimit bounds one incoming WebSocket message. The edge batches many
// messages into one rtm/subscription/data PDU, so it is far above the
// per-message limit (64 KiB by default).
const readLimit = 64 << 20

// wsTransport adapts a coder/websocket connection.
type wsTransport struct {
	ws *websocket.Conn
}

func (t *wsTransport) Read(ctx context.Context) ([]byte, error) {
	_, p, err := t.ws.Read(ctx)
	return p, err
}

func (t *wsTransport) Write(ctx context.Context, binary bool, p []byte) error {
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	return t.ws.Write(ctx, typ, p)
}

func (t *wsTransport) Ping(ctx context.Context) error { return t.ws.Ping(ctx) }

func (t *wsTransport) Close(code int, reason string) error {
	return t.ws.Close(websocket.StatusCode(code), reason)
}

func (t *wsTransport) Subprotocol() string { return t.ws.Subprotocol() }

// writeTimeout bounds one write, so a peer that stops reading cannot block
// the writer forever; the connection is dropped (and resumed) instead.
const writeTimeout = 10 * time.Second

package client

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/shared/websocket"
)

// transport is one WebSocket connection as the client uses it: whole
// messages in, whole messages out. It is the seam between the protocol
// code and the platform: shared/websocket natively (dial_notjs.go), the
// browser's own WebSocket through syscall/js in WebAssembly
// (websocket_js.go), which keeps net/http out of the browser build.
//
// Read is called by one goroutine at a time; Write, Ping and Close may be
// called concurrently with Read and with each other.
type transport interface {
	// Read returns the next message, valid until the next Read.
	Read(ctx context.Context) ([]byte, error)
	// MessagePending reports whether part of a message has been received
	// but not yet returned by Read, so that the next Read returns without
	// waiting for the peer to send anything more. Control frames do not
	// count: Read answers them and waits on. For the reading goroutine.
	MessagePending() bool
	// Write sends messages, binary or text, in order (natively in one
	// system call). A peer that does not take them within writeTimeout
	// fails the write; ctx ending stops a write that waits.
	Write(ctx context.Context, binary bool, msgs [][]byte) error
	// Ping checks that the peer is still there; browsers cannot send
	// pings, so it may do nothing there.
	Ping(ctx context.Context) error
	// Close closes with a status code and reason, waiting briefly for the
	// peer's close frame.
	Close(code websocket.StatusCode, reason string) error
	// Subprotocol is the subprotocol the server chose, "" for none.
	Subprotocol() string
}

// dialConfig is what a transport dialer needs beyond the URL.
type dialConfig struct {
	subprotocols []string
	header       map[string][]string // not settable in browsers; ignored there
	netDial      NetDialFunc         // ignored in browsers
	deflate      bool                // ignored in browsers
}

// dialFunc opens a transport; Client.dial defaults to dialWebSocket and
// tests may replace it.
type dialFunc func(ctx context.Context, url string, cfg dialConfig) (transport, error)

// readLimit bounds one incoming WebSocket message. The edge batches many
// messages into one rtm/subscription/data PDU, so it is far above the
// per-message limit (64 KiB by default).
const readLimit = 64 << 20

// writeTimeout bounds one write, so a peer that stops reading cannot block
// the writer forever; the connection is dropped (and resumed) instead.
const writeTimeout = 10 * time.Second

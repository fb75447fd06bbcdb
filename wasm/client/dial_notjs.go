//go:build !js

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// dialWebSocket opens a WebSocket with the project's own implementation
// (shared/websocket): a plain TCP or TLS dial and a hand-written upgrade,
// without net/http's client and its per-connection goroutines. An HTTP
// refusal before the upgrade (the edge answers 401
// {"error":"invalid_appkey",...}) is returned as an *rtm.Error so callers
// can tell it from a network error.
func dialWebSocket(ctx context.Context, url string, cfg dialConfig) (transport, error) {
	opts := &websocket.DialOptions{
		Subprotocols: cfg.subprotocols,
		Header:       http.Header(cfg.header),
		NetDial:      cfg.netDial,
	}
	if cfg.deflate {
		opts.Deflate = &websocket.DeflateOptions{}
	}
	ws, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		var he *websocket.HandshakeError
		if errors.As(err, &he) {
			return nil, httpRefusal(he)
		}
		return nil, err
	}
	ws.SetReadLimit(readLimit)
	ws.SetWriteTimeout(writeTimeout)
	t := &wsTransport{ws: ws, pong: make(chan struct{}, 1)}
	ws.OnPong(func() {
		select {
		case t.pong <- struct{}{}:
		default:
		}
	})
	return t, nil
}

// NetDialFunc opens a network connection, as net.Dialer.DialContext does.
type NetDialFunc = func(ctx context.Context, network, addr string) (net.Conn, error)

// httpRefusal turns a refused handshake into an error that says what the
// edge said: an *rtm.Error when the body is the edge's {"error","reason"}
// JSON, else the HTTP status.
func httpRefusal(he *websocket.HandshakeError) error {
	var body struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if json.Unmarshal(he.Body, &body) == nil && body.Error != "" {
		return &rtm.Error{Code: rtm.Code(body.Error), Reason: body.Reason}
	}
	return fmt.Errorf("%w: HTTP %s", ErrRefused, he.Status)
}

// wsTransport adapts a shared/websocket connection.
type wsTransport struct {
	ws   *websocket.Conn
	pong chan struct{} // rung by the reader on each pong
	rbuf []byte        // the reader's

	// The reader's: the context Read closes the connection on, and what
	// unregisters that.
	readCtx  context.Context
	stopRead func() bool

	wmu  sync.Mutex // guards wbuf
	wbuf []byte
}

// Read returns the next message in a buffer reused by the next Read. ctx
// ending closes the connection (the client reads with one context for
// the connection's life, so this is set up once).
func (t *wsTransport) Read(ctx context.Context) ([]byte, error) {
	if t.readCtx != ctx {
		if t.stopRead != nil {
			t.stopRead()
		}
		t.readCtx = ctx
		t.stopRead = context.AfterFunc(ctx, t.ws.CloseNow)
	}
	_, p, err := t.ws.ReadMessage(t.rbuf)
	t.rbuf = p[:0]
	if cap(p) > maxKeptReadBuffer {
		t.rbuf = nil
	}
	if err != nil && ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return p, err
}

// MessagePending implements transport.
func (t *wsTransport) MessagePending() bool { return t.ws.MessagePending() }

// maxKeptReadBuffer is the largest read buffer kept between messages: a
// batch of a busy subscription fits, a rare huge message is not held.
const maxKeptReadBuffer = 256 << 10

// Write sends the messages in one write, bounded by the connection's write
// timeout (writeTimeout); ctx is only checked first.
func (t *wsTransport) Write(ctx context.Context, binary bool, msgs [][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := websocket.OpText
	if binary {
		op = websocket.OpBinary
	}
	t.wmu.Lock()
	defer t.wmu.Unlock()
	t.wbuf = t.wbuf[:0]
	for _, p := range msgs {
		t.wbuf = t.ws.AppendFrame(t.wbuf, op, p)
	}
	err := t.ws.Write(t.wbuf)
	if cap(t.wbuf) > maxKeptWriteBuffer {
		t.wbuf = nil
	}
	return err
}

// Ping sends a ping and waits for a pong (any pong: pings are not
// pipelined by the client).
func (t *wsTransport) Ping(ctx context.Context) error {
	select {
	case <-t.pong: // a stale ring
	default:
	}
	if err := t.ws.Ping(); err != nil {
		return err
	}
	select {
	case <-t.pong:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close sends the close frame; the reader closes the connection when the
// edge answers, or after websocket.CloseTimeout.
func (t *wsTransport) Close(code websocket.StatusCode, reason string) error {
	return t.ws.Close(code, reason)
}

func (t *wsTransport) Subprotocol() string { return t.ws.Subprotocol() }

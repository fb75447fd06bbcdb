//go:build js && wasm

package client

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"syscall/js"
	"time"
	"unicode/utf8"

	"github.com/sluicehq/sluice/shared/websocket"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// errSocketClosed is the cause of a failed read or write on a browser
// WebSocket that has closed; the close code and reason are wrapped in.
var errSocketClosed = errors.New("client: websocket closed")

// Browser WebSocket limits, from the WHATWG WebSocket standard.
const (
	// maxCloseReason is the longest close reason, in UTF-8 bytes.
	maxCloseReason = 123
	// closeWait bounds the wait for the peer's close frame, as
	// the native transport (shared/websocket.CloseTimeout) does.
	closeWait = 5 * time.Second
	// sendHighWater is how many bytes the browser may hold unsent before
	// Write waits for them to drain: the browser's send buffer is
	// otherwise unbounded and a slow network would grow it forever.
	sendHighWater = 1 << 20
	// sendPoll is how often a waiting Write checks the browser's buffer,
	// which fires no event when it drains.
	sendPoll = 5 * time.Millisecond
)

var (
	jsWebSocket  = js.Global().Get("WebSocket")
	jsUint8Array = js.Global().Get("Uint8Array")
	jsArray      = js.Global().Get("Array")
)

// jsSocket is a transport over the browser's own WebSocket object. The
// browser runs the socket; its events (open, message, close) arrive as
// js.FuncOf callbacks that only record what happened and wake the reader,
// never blocking the JavaScript event loop. Browsers answer the edge's
// pings themselves and cannot send pings, so Ping does nothing.
type jsSocket struct {
	ws       js.Value
	handlers []js.Func // released once the socket is closed

	openc  chan struct{} // closed by the open event
	closec chan struct{} // closed by the close event (or release)
	wake   chan struct{} // capacity 1: a message arrived or the socket closed

	mu       sync.Mutex // guards the fields below; never held across a JS call
	inbox    [][]byte   // messages not read yet, oldest first
	opened   bool
	closed   bool
	code     int    // close code, once closed
	reason   string // close reason, once closed
	overflow bool   // a message exceeded readLimit

	closeOnce   sync.Once
	releaseOnce sync.Once
}

// openSocket creates a browser WebSocket and installs its handlers.
func openSocket(url string, subprotocols []string) (t *jsSocket, err error) {
	defer func() {
		if r := recover(); r != nil { // new WebSocket throws on a malformed URL
			err = errtext.Kind(ErrURL, errtext.Text(r))
		}
	}()
	protos := jsArray.New(len(subprotocols))
	for i, p := range subprotocols {
		protos.SetIndex(i, p)
	}
	t = &jsSocket{
		openc:  make(chan struct{}),
		closec: make(chan struct{}),
		wake:   make(chan struct{}, 1),
	}
	t.ws = jsWebSocket.New(url, protos)
	t.ws.Set("binaryType", "arraybuffer")
	t.handle("onopen", t.onOpen)
	t.handle("onmessage", t.onMessage)
	t.handle("onclose", t.onClose)
	// Errors are always followed by a close event, which carries the code.
	t.handle("onerror", func(js.Value) {})
	return t, nil
}

// handle installs one event handler.
func (t *jsSocket) handle(name string, fn func(ev js.Value)) {
	f := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) > 0 {
			fn(args[0])
		}
		return nil
	})
	t.handlers = append(t.handlers, f)
	t.ws.Set(name, f)
}

func (t *jsSocket) onOpen(js.Value) {
	t.mu.Lock()
	t.opened = true
	t.mu.Unlock()
	close(t.openc)
}

// onMessage copies a message out of JavaScript memory into the inbox.
func (t *jsSocket) onMessage(ev js.Value) {
	data := ev.Get("data")
	var p []byte
	if data.Type() == js.TypeString {
		p = []byte(data.String())
	} else {
		u8 := jsUint8Array.New(data)
		n := u8.Length()
		if n > readLimit {
			t.mu.Lock()
			t.overflow = true
			t.mu.Unlock()
			t.signal()
			return
		}
		p = make([]byte, n)
		js.CopyBytesToGo(p, u8)
	}
	t.mu.Lock()
	t.inbox = append(t.inbox, p)
	t.mu.Unlock()
	t.signal()
}

func (t *jsSocket) onClose(ev js.Value) {
	t.markClosed(ev.Get("code").Int(), ev.Get("reason").String())
}

// markClosed records the end of the socket once.
func (t *jsSocket) markClosed(code int, reason string) {
	t.mu.Lock()
	already := t.closed
	if !already {
		t.closed, t.code, t.reason = true, code, reason
	}
	t.mu.Unlock()
	if !already {
		close(t.closec)
		t.signal()
	}
}

// signal wakes the reader without blocking.
func (t *jsSocket) signal() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// closeErrLocked describes why the socket can no longer be used.
func (t *jsSocket) closeErrLocked() error {
	if t.overflow {
		return errtext.Kind(errSocketClosed, "a message exceeded "+strconv.Itoa(readLimit)+" bytes")
	}
	return errtext.Kind(errSocketClosed, "code "+strconv.Itoa(t.code)+" "+strconv.Quote(t.reason))
}

// Read returns the next message. When ctx ends it closes the socket, as
// the native transport does, since the caller is giving the connection up.
func (t *jsSocket) Read(ctx context.Context) ([]byte, error) {
	for {
		t.mu.Lock()
		switch {
		case len(t.inbox) > 0:
			p := t.inbox[0]
			t.inbox[0] = nil
			t.inbox = t.inbox[1:]
			t.mu.Unlock()
			return p, nil
		case t.closed || t.overflow:
			err := t.closeErrLocked()
			t.mu.Unlock()
			t.sendClose(websocket.StatusNormalClosure, "")
			return nil, err
		}
		t.mu.Unlock()
		select {
		case <-t.wake:
		case <-ctx.Done():
			t.sendClose(websocket.StatusNormalClosure, "")
			return nil, ctx.Err()
		}
	}
}

// MessagePending implements transport: a message was received and not read.
func (t *jsSocket) MessagePending() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.inbox) > 0 // whole messages: the browser answers pings itself
}

// Write hands the messages to the browser, then waits, up to
// writeTimeout, while the browser's unsent bytes stay above sendHighWater.
func (t *jsSocket) Write(ctx context.Context, binary bool, msgs [][]byte) error {
	if err := t.usable(); err != nil {
		return err
	}
	for _, p := range msgs {
		if err := t.send(binary, p); err != nil {
			return err
		}
	}
	if t.ws.Get("bufferedAmount").Int() <= sendHighWater {
		return nil
	}
	tick := time.NewTicker(sendPoll)
	defer tick.Stop()
	timeout := time.NewTimer(writeTimeout)
	defer timeout.Stop()
	for t.ws.Get("bufferedAmount").Int() > sendHighWater {
		select {
		case <-tick.C:
		case <-t.closec:
			return t.usable()
		case <-timeout.C:
			return errtext.Wrap("client: websocket send buffer not draining", context.DeadlineExceeded)
		case <-ctx.Done():
			return errtext.Wrap("client: websocket send buffer not draining", ctx.Err())
		}
	}
	return nil
}

// usable returns an error once the socket has closed.
func (t *jsSocket) usable() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || t.overflow {
		return t.closeErrLocked()
	}
	return nil
}

// send calls WebSocket.send, turning a JavaScript exception into an error.
func (t *jsSocket) send(binary bool, p []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("client: websocket send: " + errtext.Text(r))
		}
	}()
	if !binary {
		t.ws.Call("send", string(p))
		return nil
	}
	// A fresh array each time: the browser may still hold the previous
	// one in its send queue.
	u8 := jsUint8Array.New(len(p))
	js.CopyBytesToJS(u8, p)
	t.ws.Call("send", u8)
	return nil
}

// Ping does nothing: browsers cannot send WebSocket pings (they answer
// the edge's). A dead connection shows up as a failed write or the edge's
// close instead.
func (t *jsSocket) Ping(context.Context) error { return t.usable() }

// Close starts the closing handshake and waits briefly for its end, then
// releases the event handlers.
func (t *jsSocket) Close(code websocket.StatusCode, reason string) error {
	t.sendClose(code, reason)
	// A timer stopped once the close came: a pending one keeps Node.js
	// running for closeWait after the program is done.
	wait := time.NewTimer(closeWait)
	select {
	case <-t.closec:
	case <-wait.C:
	}
	wait.Stop()
	t.release()
	return nil
}

// startClose implements closeStarter: WebSocket.close, without waiting.
func (t *jsSocket) startClose(code websocket.StatusCode, reason string) { t.sendClose(code, reason) }

// sendClose calls WebSocket.close once. Browsers only accept 1000 and
// 3000-4999 and reasons up to 123 bytes; anything else would throw, so it
// is mapped to 1000 and truncated.
func (t *jsSocket) sendClose(code websocket.StatusCode, reason string) {
	t.closeOnce.Do(func() {
		if code != websocket.StatusNormalClosure && (code < 3000 || code > 4999) {
			code = websocket.StatusNormalClosure
		}
		defer func() { _ = recover() }() // close never matters enough to crash
		t.ws.Call("close", int(code), truncateUTF8(reason, maxCloseReason))
	})
}

// release detaches and frees the event handlers; the socket counts as
// closed from then on. Events the browser dispatches later find no
// handler, so no released function is ever called.
func (t *jsSocket) release() {
	t.releaseOnce.Do(func() {
		for _, name := range []string{"onopen", "onmessage", "onclose", "onerror"} {
			t.ws.Set(name, js.Null())
		}
		for _, f := range t.handlers {
			f.Release()
		}
		t.markClosed(1006, "closed by the client")
	})
}

// Subprotocol returns the subprotocol the edge chose.
func (t *jsSocket) Subprotocol() string { return t.ws.Get("protocol").String() }

// truncateUTF8 shortens s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// NetDialFunc is Options.NetDial's type. Browsers open the connection
// themselves, so it is never called there; it names no net type so that
// the browser build does not link the net package.
type NetDialFunc = func(ctx context.Context, network, addr string) (any, error)

//go:build js && wasm

package client

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// diagnoseTimeout bounds the request that explains a refused handshake.
const diagnoseTimeout = 5 * time.Second

// dialWebSocket opens a browser WebSocket (syscall/js, no net/http).
// Custom headers cannot be sent from a browser (cfg.header is ignored).
// Browsers hide why a handshake failed, so on failure the client asks the
// edge with a plain GET of the same URL: an edge that refuses the appkey
// answers 401 {"error":"invalid_appkey",...}, returned as an *rtm.Error
// like the native client does.
func dialWebSocket(ctx context.Context, url string, cfg dialConfig) (transport, error) {
	t, err := openSocket(url, cfg.subprotocols)
	if err != nil {
		return nil, err
	}
	select {
	case <-t.openc:
		return t, nil
	case <-t.closec:
		t.release()
		t.mu.Lock()
		code := t.code
		t.mu.Unlock()
		if refusal := diagnose(ctx, url); refusal != nil {
			return nil, refusal
		}
		return nil, errtext.Kind(ErrNetwork, "websocket handshake failed (close code "+strconv.Itoa(code)+"; the browser console may say more)")
	case <-ctx.Done():
		t.sendClose(1000, "")
		t.release()
		return nil, ctx.Err()
	}
}

// diagnose fetches the WebSocket URL over HTTP and returns the edge's
// refusal as an *rtm.Error, or nil when it cannot tell (network error,
// another origin without CORS, or a body that is not the edge's).
func diagnose(ctx context.Context, wsURL string) error {
	httpURL := "http" + strings.TrimPrefix(wsURL, "ws")
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	fetch := js.Global().Get("fetch")
	if fetch.Type() != js.TypeFunction {
		return nil
	}
	opts := js.Global().Get("Object").New()
	opts.Set("cache", "no-store")
	// Aborting settles the Promises below, so await's helpers end too.
	if ac := js.Global().Get("AbortController"); ac.Type() == js.TypeFunction {
		ctrl := ac.New()
		opts.Set("signal", ctrl.Get("signal"))
		stop := context.AfterFunc(ctx, func() { ctrl.Call("abort") })
		defer stop()
	}
	resp, err := await(ctx, fetch.Invoke(httpURL, opts))
	if err != nil || resp.Get("status").Int() < 400 {
		return nil
	}
	body, err := await(ctx, resp.Call("json"))
	if err != nil || body.Type() != js.TypeObject {
		return nil
	}
	code, reason := body.Get("error"), body.Get("reason")
	if code.Type() != js.TypeString || code.String() == "" {
		return nil
	}
	e := &rtm.Error{Code: rtm.Code(code.String())}
	if reason.Type() == js.TypeString {
		e.Reason = reason.String()
	}
	return e
}

// settled is the outcome of a JavaScript Promise.
type settled struct {
	v   js.Value
	err error
}

// await waits for a Promise from a goroutine (never from inside a
// js.FuncOf callback, which would stall the event loop the Promise needs).
func await(ctx context.Context, p js.Value) (js.Value, error) {
	ch := make(chan settled, 1)
	var onOK, onErr js.Func
	onOK = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{v: arg0(args)}
		return nil
	})
	onErr = js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- settled{err: errors.New("client: " + jsString(arg0(args)))}
		return nil
	})
	release := func() { onOK.Release(); onErr.Release() }
	p.Call("then", onOK, onErr)
	select {
	case r := <-ch:
		release()
		return r.v, r.err
	case <-ctx.Done():
		// The callbacks stay alive until the Promise settles: a released
		// function called later is an error in the console.
		go func() { <-ch; release() }()
		return js.Undefined(), ctx.Err()
	}
}

// arg0 returns the first argument, or undefined.
func arg0(args []js.Value) js.Value {
	if len(args) == 0 {
		return js.Undefined()
	}
	return args[0]
}

// jsString renders a JavaScript value (often an Error) as text.
func jsString(v js.Value) string {
	if v.Type() == js.TypeObject && v.Get("message").Type() == js.TypeString {
		return v.Get("message").String()
	}
	return js.Global().Get("String").Invoke(v).String()
}

//go:build js && wasm

package bridge

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"syscall/js"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

var (
	jsPromise = js.Global().Get("Promise")
	jsError   = js.Global().Get("Error")
	jsConsole = js.Global().Get("console")
)

// Codes of the errors that do not come from the edge (those carry the RTM
// code: authorization_denied, expired_position, ...).
const (
	codeClosed       = "closed"
	codeDisconnected = "disconnected"
	codeTimeout      = "timeout"
	codeNetwork      = "network"
	codeOptions      = "invalid_options"
	codeURL          = "invalid_url"
	codeRefused      = "refused"
	codeBadValue     = "invalid_value"
	codeUnknown      = "unknown_handle"
	codeInternal     = "internal_error"
	codeError        = "error"
)

// promise returns a Promise settled by fn, which runs on its own
// goroutine so the calling callback returns at once. A panic in fn
// rejects the Promise.
func promise(fn func() (js.Value, error)) js.Value {
	executor := js.FuncOf(func(_ js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			defer func() {
				if r := recover(); r != nil {
					reject.Invoke(panicError(r))
				}
			}()
			v, err := fn()
			if err != nil {
				reject.Invoke(errorValue(err))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	// The Promise constructor calls the executor before returning.
	defer executor.Release()
	return jsPromise.New(executor)
}

// rejected returns a Promise already rejected with err.
func rejected(err error) js.Value {
	return jsPromise.Call("reject", errorValue(err))
}

// errorValue turns a Go error into a JavaScript Error with a code (the
// RTM code for the edge's refusals) and, when the edge gave them, reason,
// position and subscriptionId. client-js turns it into a SluiceError.
func errorValue(err error) js.Value {
	e := jsError.New(err.Error())
	e.Set("code", codeOf(err))
	if re, ok := rtm.AsError(err); ok {
		e.Set("reason", re.Reason)
		if re.Position != "" {
			e.Set("position", re.Position)
		}
		if re.SubscriptionID != "" {
			e.Set("subscriptionId", re.SubscriptionID)
		}
	}
	return e
}

// codeOf classifies an error for JavaScript code to branch on.
func codeOf(err error) string {
	if re, ok := rtm.AsError(err); ok {
		return string(re.Code)
	}
	var h *handleError
	switch {
	case errors.Is(err, client.ErrClosed):
		return codeClosed
	case errors.Is(err, client.ErrDisconnected):
		return codeDisconnected
	case errors.Is(err, context.DeadlineExceeded):
		return codeTimeout
	case errors.Is(err, client.ErrOptions):
		return codeOptions
	case errors.Is(err, client.ErrURL):
		return codeURL
	case errors.Is(err, client.ErrNetwork):
		return codeNetwork
	case errors.Is(err, client.ErrRefused):
		return codeRefused
	case errors.Is(err, errNotAValue):
		return codeBadValue
	case errors.As(err, &h):
		return codeUnknown
	}
	return codeError
}

// panicError reports a Go panic: the stack goes to the console for whoever
// debugs it, a short message to the caller.
func panicError(r any) js.Value {
	msg := "sluice: internal error: " + errtext.Text(r)
	jsConsole.Call("error", msg+"\n"+stack())
	e := jsError.New(msg)
	e.Set("code", codeInternal)
	return e
}

// handleError reports a client or subscription number that is unknown
// (closed, ended, or never issued).
type handleError struct {
	what string
	n    int
}

func (e *handleError) Error() string {
	return "sluice: no " + e.what + " #" + strconv.Itoa(e.n) + " (closed or ended)"
}

// guard runs a callback of the client (a message handler, OnState,
// OnError, OnInfo) on the delivery goroutine. client-js wraps application
// callbacks in try/catch, so a panic here (a JavaScript exception, or a
// bug converting a value) is logged rather than allowed to end the
// program, which would stop every client of the page.
func guard(fn func()) {
	defer func() {
		if r := recover(); r != nil {
			jsConsole.Call("error", "sluice: a callback failed: "+errtext.Text(r)+"\n"+stack())
		}
	}()
	fn()
}

// stack returns the calling goroutine's stack, as runtime/debug.Stack
// does; that package would link fmt and os into sluice.wasm.
func stack() string {
	buf := make([]byte, 4096)
	for {
		n := runtime.Stack(buf, false)
		if n < len(buf) {
			return string(buf[:n])
		}
		buf = make([]byte, 2*len(buf))
	}
}

//go:build js && wasm

package bridge

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"
	"testing"
	"time"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// settle waits for a Promise and returns its value, or the error it was
// rejected with (ok false).
func settle(t *testing.T, p js.Value) (v js.Value, ok bool) {
	t.Helper()
	type result struct {
		v  js.Value
		ok bool
	}
	done := make(chan result, 1)
	var onValue, onError js.Func
	onValue = js.FuncOf(func(_ js.Value, args []js.Value) any { done <- result{arg(args, 0), true}; return nil })
	onError = js.FuncOf(func(_ js.Value, args []js.Value) any { done <- result{arg(args, 0), false}; return nil })
	defer onValue.Release()
	defer onError.Release()
	p.Call("then", onValue, onError)
	select {
	case r := <-done:
		return r.v, r.ok
	case <-time.After(10 * time.Second):
		t.Fatal("the Promise did not settle within 10s")
		return js.Undefined(), false
	}
}

// errorFields shows a JavaScript Error as the fields client-js reads.
func errorFields(e js.Value) string {
	s := fmt.Sprintf("Error=%v message=%q code=%q", e.InstanceOf(jsError), e.Get("message").String(), e.Get("code").String())
	for _, k := range []string{"reason", "position", "subscriptionId"} {
		if f := e.Get(k); !f.IsUndefined() {
			s += fmt.Sprintf(" %s=%q", k, f.String())
		}
	}
	return s
}

func TestErrorValue(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "the edge's refusal", err: &rtm.Error{Code: rtm.CodeExpiredPosition, Reason: "gone", Position: "1:2", SubscriptionID: "s"},
			want: `Error=true message="rtm: expired_position: gone" code="expired_position" reason="gone" position="1:2" subscriptionId="s"`},
		{name: "wrapped refusal", err: fmt.Errorf("publish: %w", &rtm.Error{Code: rtm.CodeAuthorizationDenied, Reason: "no"}),
			want: `Error=true message="publish: rtm: authorization_denied: no" code="authorization_denied" reason="no"`},
		{name: "closed", err: fmt.Errorf("x: %w", client.ErrClosed), want: `Error=true message="x: client: closed" code="closed"`},
		{name: "disconnected", err: client.ErrDisconnected, want: `Error=true message="client: disconnected" code="disconnected"`},
		{name: "timeout", err: context.DeadlineExceeded, want: `Error=true message="context deadline exceeded" code="timeout"`},
		{name: "options", err: fmt.Errorf("%w: bad", client.ErrOptions), want: `Error=true message="client: bad options: bad" code="invalid_options"`},
		{name: "value", err: fmt.Errorf("%w: NaN", errNotAValue), want: `Error=true message="bridge: not a message value: NaN" code="invalid_value"`},
		{name: "handle", err: &handleError{what: "client", n: 3}, want: `Error=true message="sluice: no client #3 (closed or ended)" code="unknown_handle"`},
		{name: "other", err: errors.New("boom"), want: `Error=true message="boom" code="error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorFields(errorValue(tt.err)); got != tt.want {
				t.Errorf("errorValue(%v) = %s\nwant %s", tt.err, got, tt.want)
			}
		})
	}
}

// TestPromise: a Promise settles with fn's value or error, and with an
// internal_error (its stack on the console) when fn panics.
func TestPromise(t *testing.T) {
	if v, ok := settle(t, promise(func() (js.Value, error) { return js.ValueOf("v"), nil })); !ok || v.String() != "v" {
		t.Errorf("resolved with %v, ok %v", v, ok)
	}
	if e, ok := settle(t, promise(func() (js.Value, error) { return js.Undefined(), client.ErrClosed })); ok || e.Get("code").String() != codeClosed {
		t.Errorf("rejected with %s, ok %v", errorFields(e), ok)
	}
	restore := muteConsoleError(t)
	e, ok := settle(t, promise(func() (js.Value, error) { panic("bug") }))
	if logged := restore(); ok || errorFields(e) != `Error=true message="sluice: internal error: bug" code="internal_error"` || logged != 1 {
		t.Errorf("after a panic: %s, ok %v, %d console.error lines", errorFields(e), ok, logged)
	}
}

// muteConsoleError replaces console.error until the returned function,
// which says how often it was called.
func muteConsoleError(t *testing.T) func() int {
	t.Helper()
	restore := jsEval(t, `(() => {
		const saved = console.error;
		let n = 0;
		console.error = () => { n++ };
		return () => { console.error = saved; return n };
	})()`)
	return func() int { return restore.Invoke().Int() }
}

// TestExportRefusesBadArguments: the exported calls check their arguments
// before any network work and reject with the code client-js maps to a
// SluiceError.
func TestExportRefusesBadArguments(t *testing.T) {
	api := Export()
	tests := []struct {
		name string
		call string // a function of the API object
		want string
	}{
		{name: "connect without a URL", call: `api => api.connect(undefined, {appkey: "a"})`,
			want: `Error=true message="client: bad options: url must be a string" code="invalid_options"`},
		{name: "connect with bad options", call: `api => api.connect("ws://127.0.0.1:1", {appkey: "a", minBackoff: -1})`,
			want: `Error=true message="client: bad options: minBackoff must be a number >= 0" code="invalid_options"`},
		{name: "publish on no client", call: `api => api.publish(7, "c", 1)`,
			want: `Error=true message="sluice: no client #7 (closed or ended)" code="unknown_handle"`},
		{name: "a client number not a number", call: `api => api.read("1", "c")`,
			want: `Error=true message="sluice: no client #0 (closed or ended)" code="unknown_handle"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := settle(t, jsEval(t, tt.call).Invoke(api))
			if ok {
				t.Fatalf("%s resolved with %s", tt.call, describe.Invoke(e).String())
			}
			if got := errorFields(e); got != tt.want {
				t.Errorf("%s: %s\nwant %s", tt.call, got, tt.want)
			}
		})
	}
}

// TestExportOfWhatIsGone: ending what is already gone succeeds (close and
// unsubscribe are idempotent), and the synchronous calls answer at once.
func TestExportOfWhatIsGone(t *testing.T) {
	api := Export()
	for _, call := range []string{`api => api.close(5)`, `api => api.unsubscribe(3)`} {
		if v, ok := settle(t, jsEval(t, call).Invoke(api)); !ok || !v.IsUndefined() {
			t.Errorf("%s: ok %v, %s; want undefined", call, ok, describe.Invoke(v).String())
		}
	}
	if s := api.Call("state", 9).String(); s != client.Closed.String() {
		t.Errorf("state of no client = %q, want %q", s, client.Closed.String())
	}
	if p := api.Call("position", 9); !p.IsNull() {
		t.Errorf("position of no subscription = %s, want null", describe.Invoke(p).String())
	}
}

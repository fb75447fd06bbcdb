//go:build js && wasm

package bridge

import (
	"context"
	"errors"
	"syscall/js"

	"github.com/sluicehq/sluice/wasm/client"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// tokenOption reads connect's token: a JWT string, or a function returning
// one or a Promise of one, which the client calls at each connect and
// again before each token's exp (client.Options.TokenFunc).
func tokenOption(o options, co *client.Options) error {
	f, ok := o.get("token")
	if !ok {
		return nil
	}
	if t, _ := typeOf(f); t == js.TypeFunction {
		co.TokenFunc = jsTokenFunc(f)
		return nil
	}
	var err error
	co.Token, err = stringArg(f, "token")
	return err
}

// jsTokenFunc adapts a JavaScript token source to client.Options.TokenFunc:
// it calls fn and waits, up to ctx, for its value or its Promise to
// settle with a string.
func jsTokenFunc(fn js.Value) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		type result struct {
			tok string
			err error
		}
		done := make(chan result, 1) // the first of the two callbacks wins
		var onValue, onError js.Func
		// Each releases both once the Promise settled: a source slower
		// than ctx still finds them when it does.
		release := func() { onValue.Release(); onError.Release() }
		onValue = js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer release()
			r := result{err: errtext.Kind(client.ErrOptions, "the token function must return a string")}
			if len(args) > 0 && args[0].Type() == js.TypeString {
				r = result{tok: args[0].String()}
			}
			done <- r
			return nil
		})
		onError = js.FuncOf(func(_ js.Value, args []js.Value) any {
			defer release()
			reason := "rejected"
			if len(args) > 0 {
				reason = js.Global().Get("String").Invoke(args[0]).String()
			}
			done <- result{err: errors.New("the token function failed: " + reason)}
			return nil
		})
		if err := callTokenFunc(fn, onValue, onError); err != nil {
			release()
			return "", err
		}
		select {
		case r := <-done:
			return r.tok, r.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// callTokenFunc calls fn and hands what it returns, through
// Promise.resolve, to onValue or onError; a throw is an error.
func callTokenFunc(fn js.Value, onValue, onError js.Func) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("the token function threw: " + errtext.Text(r))
		}
	}()
	jsPromise.Call("resolve", fn.Invoke()).Call("then", onValue, onError)
	return nil
}

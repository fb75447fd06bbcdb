//go:build js && wasm

package bridge

import (
	"context"
	"syscall/js"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// connect(url, options, onState) dials and authenticates; onState hears
// every state change as a string, on the client's delivery goroutine.
func (b *bridge) connect(args []js.Value) js.Value {
	url, err := stringArg(arg(args, 0), "url")
	if err != nil {
		return rejected(err)
	}
	opts, timeout, err := clientOptions(arg(args, 1))
	if err != nil {
		return rejected(err)
	}
	if onState := arg(args, 2); isFunction(onState) {
		opts.OnState = func(s client.State) { guard(func() { onState.Invoke(s.String()) }) }
	}
	return promise(func() (js.Value, error) {
		// Dial is bounded by DialTimeout; it does not retry.
		c, err := client.Dial(context.Background(), url, &opts)
		if err != nil {
			return js.Undefined(), err
		}
		return js.ValueOf(b.add(&clientEntry{c: c, timeout: timeout})), nil
	})
}

// publish(c, channel, value, {excludeSelf}) publishes and resolves with
// the position.
func (b *bridge) publish(args []js.Value) js.Value {
	return b.store(args, (*client.Client).Publish)
}

// write(c, channel, value, {excludeSelf}) is publish under RTM's
// key-value name.
func (b *bridge) write(args []js.Value) js.Value {
	return b.store(args, (*client.Client).Write)
}

// storeOp is Client.Publish or Client.Write.
type storeOp func(*client.Client, context.Context, string, any, ...client.PublishOption) (rtm.Position, error)

// store converts the value at once (the page may change its object right
// after the call) and sends it on a goroutine.
func (b *bridge) store(args []js.Value, op storeOp) js.Value {
	e, channel, err := b.clientChannel(args)
	if err != nil {
		return rejected(err)
	}
	v, err := fromJS(arg(args, 2), 0)
	if err != nil {
		return rejected(err)
	}
	var po []client.PublishOption
	if (options{arg(args, 3)}).flag("excludeSelf") {
		po = append(po, client.ExcludeSelf())
	}
	return promise(func() (js.Value, error) {
		ctx, cancel := e.timeout.context()
		defer cancel()
		pos, err := op(e.c, ctx, channel, v, po...)
		if err != nil {
			return js.Undefined(), err
		}
		return js.ValueOf(pos.String()), nil
	})
}

// delete(c, channel) publishes null and resolves with the position.
func (b *bridge) delete(args []js.Value) js.Value {
	e, channel, err := b.clientChannel(args)
	if err != nil {
		return rejected(err)
	}
	return promise(func() (js.Value, error) {
		ctx, cancel := e.timeout.context()
		defer cancel()
		pos, err := e.c.Delete(ctx, channel)
		if err != nil {
			return js.Undefined(), err
		}
		return js.ValueOf(pos.String()), nil
	})
}

// read(c, channel, {position}) resolves with {message, position}: the
// newest message, or the one at position.
func (b *bridge) read(args []js.Value) js.Value {
	e, channel, err := b.clientChannel(args)
	if err != nil {
		return rejected(err)
	}
	var ro []client.ReadOption
	pos, err := options{arg(args, 2)}.str("position")
	if err != nil {
		return rejected(err)
	}
	if pos != "" {
		p, err := rtm.ParsePosition(pos)
		if err != nil {
			return rejected(err)
		}
		ro = append(ro, client.AtPosition(p))
	}
	return promise(func() (js.Value, error) {
		ctx, cancel := e.timeout.context()
		defer cancel()
		msg, at, err := e.c.Read(ctx, channel, ro...)
		if err != nil {
			return js.Undefined(), err
		}
		out := jsObject.New()
		out.Set("message", toJS(msg))
		out.Set("position", js.Null())
		if at != (rtm.Position{}) {
			out.Set("position", at.String())
		}
		return out, nil
	})
}

// state(c) returns the connection state at once; "closed" for a client
// that is gone.
func (b *bridge) state(args []js.Value) js.Value {
	e, _, err := b.client(args)
	if err != nil {
		return js.ValueOf(client.Closed.String())
	}
	return js.ValueOf(e.c.State().String())
}

// suspend(c) closes the client's connection until resume(c), at once:
// client-js calls it on pagehide when the page goes into the back/forward
// cache, whose frozen page runs nothing more. A client that is gone is
// ignored.
func (b *bridge) suspend(args []js.Value) js.Value {
	if e, _, err := b.client(args); err == nil {
		e.c.Suspend()
	}
	return js.Undefined()
}

// resume(c) reconnects a suspended client and resubscribes its
// subscriptions from their positions (client-js: on pageshow from the
// back/forward cache).
func (b *bridge) resume(args []js.Value) js.Value {
	if e, _, err := b.client(args); err == nil {
		e.c.Resume()
	}
	return js.Undefined()
}

// close(c) closes the client; it resolves once its goroutines are done.
// Closing a client that is gone resolves too: close is idempotent.
func (b *bridge) close(args []js.Value) js.Value {
	e, n, err := b.client(args)
	if err != nil {
		return jsPromise.Call("resolve")
	}
	b.mu.Lock()
	delete(b.clients, n)
	b.mu.Unlock()
	return promise(func() (js.Value, error) {
		e.c.Close() // ends every subscription, whose watchers forget them
		return js.Undefined(), nil
	})
}

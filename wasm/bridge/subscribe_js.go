//go:build js && wasm

package bridge

import (
	"syscall/js"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// subscribe(c, channel, options, onMessage, onError, onInfo, onGap,
// onPresence) subscribes (onPresence: see presenceCallbacks). onMessage(value, {subscriptionId, position, endOfBatch}) is
// called for each message, onError(error) when the edge ends the
// subscription (out_of_sync, or with strict expired_position when
// resuming after a reconnect), onInfo({info, reason, position,
// missedMessageCount, subscriptionId}) for a fast_forward and
// onGap({subscriptionId, channel, requested, resumed, missedMessageCount,
// reason}) when the subscription carries on past messages it may have
// missed; all on the client's delivery goroutine, in order. It resolves
// with {sub, id, position} once the edge accepted.
func (b *bridge) subscribe(args []js.Value) js.Value {
	e, cid, err := b.client(args)
	if err != nil {
		return rejected(err)
	}
	channel, err := stringArg(arg(args, 1), "channel")
	if err != nil {
		return rejected(err)
	}
	so, err := subscribeOptions(arg(args, 2))
	if err != nil {
		return rejected(err)
	}
	onMessage, onError, onInfo, onGap := arg(args, 3), arg(args, 4), arg(args, 5), arg(args, 6)
	if !isFunction(onMessage) {
		return rejected(client.ErrOptions)
	}
	if isFunction(onError) {
		so.OnError = func(err error) { guard(func() { onError.Invoke(errorValue(err)) }) }
	}
	if isFunction(onInfo) {
		so.OnInfo = func(i rtm.SubscriptionInfo) { guard(func() { onInfo.Invoke(infoValue(i)) }) }
	}
	if isFunction(onGap) {
		so.OnGap = func(g client.Gap) { guard(func() { onGap.Invoke(gapValue(g)) }) }
	}
	presenceCallbacks(so, arg(args, 7))
	handler := func(m client.Message) {
		guard(func() {
			info := jsObject.New()
			info.Set("subscriptionId", m.SubscriptionID)
			info.Set("position", m.Position.String())
			info.Set("endOfBatch", m.EndOfBatch)
			if m.Channel != "" {
				info.Set("channel", m.Channel) // a prefix subscription's
			}
			onMessage.Invoke(toJS(m.Value), info)
		})
	}
	return promise(func() (js.Value, error) {
		ctx, cancel := e.timeout.context()
		defer cancel()
		s, err := e.c.Subscribe(ctx, channel, so, handler)
		if err != nil {
			return js.Undefined(), err
		}
		out := jsObject.New()
		out.Set("sub", b.addSub(s, cid))
		out.Set("id", s.ID())
		out.Set("position", s.Position().String())
		return out, nil
	})
}

// infoValue converts a fast_forward notice.
func infoValue(i rtm.SubscriptionInfo) js.Value {
	o := jsObject.New()
	o.Set("info", i.Info)
	o.Set("reason", i.Reason)
	o.Set("position", i.Position)
	o.Set("subscriptionId", i.SubscriptionID)
	o.Set("missedMessageCount", toJS(i.MissedMessageCount))
	return o
}

// gapValue converts a Gap.
func gapValue(g client.Gap) js.Value {
	o := jsObject.New()
	o.Set("subscriptionId", g.SubscriptionID)
	o.Set("channel", g.Channel)
	o.Set("requested", g.Requested.String())
	o.Set("resumed", g.Resumed.String())
	o.Set("missedMessageCount", toJS(g.MissedMessageCount))
	o.Set("reason", g.Reason)
	return o
}

// unsubscribe(sub) ends a subscription here and on the edge; one that
// already ended resolves too.
func (b *bridge) unsubscribe(args []js.Value) js.Value {
	e, _, err := b.sub(args)
	if err != nil {
		return jsPromise.Call("resolve")
	}
	b.mu.Lock()
	c := b.clients[e.cid]
	b.mu.Unlock()
	timeout := timeoutSetting(defaultTimeout)
	if c != nil {
		timeout = c.timeout
	}
	return promise(func() (js.Value, error) {
		ctx, cancel := timeout.context()
		defer cancel()
		return js.Undefined(), e.s.Unsubscribe(ctx)
	})
}

// position(sub) returns, at once, the position after the last batch handed
// to the handler: resubscribing there continues without gap or duplicate.
// It is null for a subscription that has ended.
func (b *bridge) position(args []js.Value) js.Value {
	e, _, err := b.sub(args)
	if err != nil {
		return js.Null()
	}
	return js.ValueOf(e.s.Position().String())
}

//go:build js && wasm

package bridge

import (
	"syscall/js"

	"github.com/sluicehq/sluice/wasm/client"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// presenceCallbacks sets a presence subscription's OnPresence to call
// onPresence(kind, value, users, connections): ("members", [member, ...])
// once the members are first known, ("join", member) and ("leave",
// member) for each change, ("count", []) when anonymous connections came
// or went, with the channel's counts after it; a member is {userId,
// info, connections}.
func presenceCallbacks(so *client.SubscribeOptions, onPresence js.Value) {
	if !so.Presence || !isFunction(onPresence) {
		return
	}
	so.OnPresence = func(ev client.PresenceEvent) {
		guard(func() {
			v := membersValue(ev.Members)
			if (ev.Kind == client.PresenceJoin || ev.Kind == client.PresenceLeave) && len(ev.Members) == 1 {
				v = memberValue(ev.Members[0])
			}
			onPresence.Invoke(ev.Kind, v, ev.Users, ev.Connections)
		})
	}
}

func memberValue(m client.Member) js.Value {
	o := jsObject.New()
	o.Set("userId", m.UserID)
	o.Set("info", toJS(m.Info))
	o.Set("connections", m.Connections)
	return o
}

func membersValue(ms []client.Member) js.Value {
	a := jsArray.New(len(ms))
	for i, m := range ms {
		a.SetIndex(i, memberValue(m))
	}
	return a
}

// presence(c, channel, {after, limit}) -> Promise<{members, users,
// connections, next}>: a page of the channel's members from the edge.
func (b *bridge) presence(args []js.Value) js.Value {
	e, channel, err := b.clientChannel(args)
	if err != nil {
		return rejected(err)
	}
	o := options{arg(args, 2)}
	after, err := o.str("after")
	if err != nil {
		return rejected(err)
	}
	limit, err := o.num("limit")
	if err != nil {
		return rejected(err)
	}
	if limit < 0 || limit != float64(int(limit)) {
		return rejected(errtext.Kind(client.ErrOptions, "limit must be a whole number, 0 for the edge's default"))
	}
	return promise(func() (js.Value, error) {
		ctx, cancel := e.timeout.context()
		defer cancel()
		page, err := e.c.Presence(ctx, channel, after, int(limit))
		if err != nil {
			return js.Undefined(), err
		}
		out := jsObject.New()
		out.Set("members", membersValue(page.Members))
		out.Set("users", page.Users)
		out.Set("connections", page.Connections)
		if page.Next != "" {
			out.Set("next", page.Next)
		} else {
			out.Set("next", js.Null())
		}
		return out, nil
	})
}

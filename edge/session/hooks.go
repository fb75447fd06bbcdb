package session

import (
	"encoding/json"
	"fmt"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/hook"
	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The hooks a session asks (edge/hook): the subscribe and publish hooks,
// on the connection's reader, which they hold for at most the hook
// timeout. The connect hook is the server's, asked before the upgrade
// (edge/server's hooks.go); its answer is applied here (Connect).

// connectHookRole names the role of a connection whose connect hook gave
// explicit permissions.
const connectHookRole = "connect_hook"

// Connect gives a new connection the identity and the grant its app's
// connect hook answered (nil: the app has no connect hook); before the
// connection runs.
func (c *Session) Connect(ans *hook.ConnectAnswer) {
	if ans == nil {
		return
	}
	if ans.User != "" {
		// One identity for presence, the hooks and the server API: the
		// user the connect hook named, until a JWT names another.
		var info any
		if len(ans.Info) > 0 {
			_ = json.Unmarshal(ans.Info, &info) // the hook package checked it is JSON
		}
		c.pres.SetUser(ans.User, info, false)
	}
	switch {
	case ans.Permissions != nil:
		c.role = connectHookRole
		c.perms = app.Permissions{Publish: ans.Permissions.Publish, Subscribe: ans.Permissions.Subscribe}
	case ans.Role != "":
		r, _ := c.app.Role(ans.Role) // connectHook checked it exists
		c.role, c.perms = r.Name, r.Permissions
	}
}

// hookDenied is the error of a request a hook denied, with the backend's
// reason (the app's own words) or the failure's.
func hookDenied(reason, what, channel string) error {
	if reason == "" {
		reason = fmt.Sprintf("the app refused to let you %s channel %q", what, channel)
	}
	return rtm.Errorf(rtm.CodeAuthorizationDenied, "%s", reason)
}

// askSubscribe asks the app's subscribe hook, when it has one, about a
// subscription the connection's permissions allow.
func (c *Session) askSubscribe(channel, id string) error {
	h := c.app.Hooks
	if !h.Has(hook.HookSubscribe) {
		return nil
	}
	c.WakeIfDue() // the replies before it need not wait for the backend
	ans, err := h.Subscribe(c.Context(), &hook.SubscribeRequest{Appkey: c.app.Key, Connection: c.ID(),
		User: c.pres.User(), Role: c.role, Channel: channel, SubscriptionID: id})
	if err != nil {
		c.edge.Logger.Warn("subscribe hook failed", "appkey", c.app.Key, "remote", c.Remote(), "err", err)
	}
	if !ans.Allow {
		return hookDenied(ans.Reason, "subscribe to", channel)
	}
	return nil
}

// askPublish asks the app's publish hook, when it has one, about a
// publish the connection's permissions allow, and returns the message to
// publish: the client's, or the backend's replacement.
func (c *Session) askPublish(channel string, message any) (any, error) {
	h := c.app.Hooks
	if !h.Has(hook.HookPublish) {
		return message, nil
	}
	c.WakeIfDue()
	raw, err := (jsoncodec.Codec{}).AppendValue(nil, message)
	if err != nil {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "message cannot be encoded")
	}
	ans, err := h.Publish(c.Context(), &hook.PublishRequest{Appkey: c.app.Key, Connection: c.ID(),
		User: c.pres.User(), Role: c.role, Channel: channel, Message: raw})
	if err == nil && ans.Allow && ans.Message != nil {
		var replaced any
		if derr := (jsoncodec.Codec{}).DecodeBody(ans.Message, &replaced); derr != nil {
			err = fmt.Errorf("session: the publish hook's replacement message: %w", derr)
			ans = &hook.Answer{}
			ans.Allow, ans.Reason = h.Failed(hook.HookPublish)
		} else {
			message = replaced
		}
	}
	if err != nil {
		c.edge.Logger.Warn("publish hook failed", "appkey", c.app.Key, "remote", c.Remote(), "err", err)
	}
	if !ans.Allow {
		return nil, hookDenied(ans.Reason, "publish to", channel)
	}
	return message, nil
}

// occupy counts sub in its channel, before it is handed over, and gives
// it the vacate its close calls; nothing for an app without events.
func (c *Session) occupy(sub *delivery.Subscription) {
	if o := c.app.Occupancy; o != nil {
		sub.Vacate = o.Occupy(sub.Channel)
	}
}

// disconnected posts the disconnect event of a connection that has
// ended.
func (c *Session) disconnected() {
	ev := c.app.Hooks.Events()
	if ev == nil {
		return
	}
	code, reason := c.CloseStatus()
	_ = ev.Post(hook.KindDisconnect, hook.DisconnectData{Connection: c.ID(), User: c.pres.User(), Code: int(code), Reason: reason})
}

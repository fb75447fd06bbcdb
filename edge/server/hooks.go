package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/hook"
	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// What the edge does with its apps' hooks (edge/hook): the connect hook
// is asked in accept, before the upgrade, on the HTTP handler's
// goroutine; the subscribe and publish hooks on the connection's reader,
// which they hold for at most the hook timeout; events are posted
// without blocking anyone.

// hookState is the server's part of the hooks: one *hook.Hooks per app
// with any (read-only after New), the occupancy of the apps that post
// events, and the connection ids.
type hookState struct {
	hooks    map[string]*hook.Hooks
	occupied map[string]*hook.Occupancy // by appkey, for the apps with an events sender
	run      string                     // this edge run's prefix of connection ids
	seq      atomic.Uint64              // the last connection id's number
}

// startHooks makes every app's hooks, starting their events senders.
func (s *Server) startHooks(apps []*app.App) error {
	s.hk.hooks = make(map[string]*hook.Hooks)
	s.hk.occupied = make(map[string]*hook.Occupancy)
	s.hk.run = strconv.FormatUint(rand.Uint64()>>24, 36)
	for _, a := range apps {
		h, err := hook.New(a.Key, a.Hooks, &hook.Options{Edge: s.hk.run, Logger: s.log})
		if err != nil {
			s.closeHooks(context.Background())
			return fmt.Errorf("server: app %q: hooks: %w", a.Key, err)
		}
		if h == nil {
			continue
		}
		s.hk.hooks[a.Key] = h
		if ev := h.Events(); ev != nil {
			s.hk.occupied[a.Key] = hook.NewOccupancy(ev)
		}
	}
	return nil
}

// closeHooks delivers the events still queued until ctx ends and stops
// every events sender.
func (s *Server) closeHooks(ctx context.Context) {
	var wg sync.WaitGroup
	for _, h := range s.hk.hooks {
		wg.Go(func() { h.Close(ctx) })
	}
	wg.Wait()
}

// HookStats returns each app's hook and event counts, by appkey, for the
// apps that have hooks.
func (s *Server) HookStats() map[string]hook.Stats {
	out := make(map[string]hook.Stats, len(s.hk.hooks))
	for k, h := range s.hk.hooks {
		out[k] = h.Stats()
	}
	return out
}

// Events returns the events sender of an app (presence posts its joins
// and leaves there); nil, whose Post does nothing, when the app has none.
func (s *Server) Events(appKey string) *hook.Events { return s.hk.hooks[appKey].Events() }

// newConnID returns a connection id unique to this edge's run: the run's
// random prefix, so that two edges (or two runs) do not share ids, and a
// sequence number.
func (s *Server) newConnID() string {
	return s.hk.run + "." + strconv.FormatUint(s.hk.seq.Add(1), 36)
}

// handshakeHeaders are the upgrade's own headers, not the client's
// business: not sent to the connect hook.
var handshakeHeaders = map[string]bool{
	"Upgrade": true, "Connection": true, "Sec-Websocket-Key": true,
	"Sec-Websocket-Version": true, "Sec-Websocket-Extensions": true,
}

// connectHook asks the app's connect hook about an upgrade. It returns
// the answer to apply, or false once it has refused the request: 403
// authorization_denied when the backend denied, 503 unavailable when
// the hook failed and failures deny.
func (s *Server) connectHook(w http.ResponseWriter, r *http.Request, a *app.App, id string) (*hook.ConnectAnswer, bool) {
	h := s.hk.hooks[a.Key]
	if !h.Has(hook.HookConnect) {
		return nil, true
	}
	req := &hook.ConnectRequest{Appkey: a.Key, Connection: id, Remote: r.RemoteAddr,
		Token: r.URL.Query().Get("token"), Headers: make(map[string]string, len(r.Header))}
	for name, vs := range r.Header {
		if !handshakeHeaders[name] {
			req.Headers[name] = joinValues(vs)
		}
	}
	for _, ck := range r.Cookies() {
		if req.Cookies == nil {
			req.Cookies = make(map[string]string)
		}
		if _, dup := req.Cookies[ck.Name]; !dup {
			req.Cookies[ck.Name] = ck.Value
		}
	}
	ans, err := h.Connect(r.Context(), req)
	if err == nil && ans.Allow && ans.Role != "" {
		if _, ok := a.Role(ans.Role); !ok {
			err = fmt.Errorf("server: the connect hook of app %q answered role %q, which the app does not have", a.Key, ans.Role)
			ans = &hook.ConnectAnswer{}
			ans.Allow, ans.Reason = h.Failed(hook.HookConnect)
		}
	}
	if err != nil {
		s.log.Warn("connect hook failed", "appkey", a.Key, "remote", r.RemoteAddr, "err", err)
	}
	switch {
	case ans.Allow:
		return ans, true
	case err != nil:
		s.counters.Refuse(rtm.CodeUnavailable)
		s.RefuseRequest(w, r, http.StatusServiceUnavailable, string(rtm.CodeUnavailable), ans.Reason)
	default:
		s.counters.Refuse(rtm.CodeAuthorizationDenied)
		reason := ans.Reason
		if reason == "" {
			reason = "the app refused this connection"
		}
		s.RefuseRequest(w, r, http.StatusForbidden, string(rtm.CodeAuthorizationDenied), reason)
	}
	return nil, false
}

func joinValues(vs []string) string { return strings.Join(vs, ", ") }

// connectHookRole names the role of a connection whose connect hook gave
// explicit permissions.
const connectHookRole = "connect_hook"

// applyConnect gives a new connection its identity and the grant its
// connect hook answered; before the connection runs.
func (c *conn) applyConnect(ans *hook.ConnectAnswer) {
	c.hooks, c.occ = c.srv.hk.hooks[c.app.Key], c.srv.hk.occupied[c.app.Key]
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
func (c *conn) askSubscribe(channel, id string) error {
	h := c.hooks
	if !h.Has(hook.HookSubscribe) {
		return nil
	}
	c.WakeIfDue() // the replies before it need not wait for the backend
	ans, err := h.Subscribe(c.Context(), &hook.SubscribeRequest{Appkey: c.app.Key, Connection: c.ID(),
		User: c.pres.User(), Role: c.role, Channel: channel, SubscriptionID: id})
	if err != nil {
		c.srv.log.Warn("subscribe hook failed", "appkey", c.app.Key, "remote", c.Remote(), "err", err)
	}
	if !ans.Allow {
		return hookDenied(ans.Reason, "subscribe to", channel)
	}
	return nil
}

// askPublish asks the app's publish hook, when it has one, about a
// publish the connection's permissions allow, and returns the message to
// publish: the client's, or the backend's replacement.
func (c *conn) askPublish(channel string, message any) (any, error) {
	h := c.hooks
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
			err = fmt.Errorf("server: the publish hook's replacement message: %w", derr)
			ans = &hook.Answer{}
			ans.Allow, ans.Reason = h.Failed(hook.HookPublish)
		} else {
			message = replaced
		}
	}
	if err != nil {
		c.srv.log.Warn("publish hook failed", "appkey", c.app.Key, "remote", c.Remote(), "err", err)
	}
	if !ans.Allow {
		return nil, hookDenied(ans.Reason, "publish to", channel)
	}
	return message, nil
}

// occupy counts sub in its channel, before it is handed over, and gives
// it the vacate its close calls; nothing for an app without events.
func (c *conn) occupy(sub *delivery.Subscription) {
	if o := c.occ; o != nil {
		sub.Vacate = o.Occupy(sub.Channel)
	}
}

// disconnected posts the disconnect event of a connection that has ended.
func (s *Server) disconnected(c *conn) {
	ev := s.Events(c.app.Key)
	if ev == nil {
		return
	}
	code, reason := c.CloseStatus()
	_ = ev.Post(hook.KindDisconnect, hook.DisconnectData{Connection: c.ID(), User: c.pres.User(), Code: int(code), Reason: reason})
}

// StatusBackendDisconnect is the close code of a connection the app's
// backend disconnected (the server API's disconnect): in the range RFC
// 6455 leaves to applications, so clients tell it from the edge's own.
const StatusBackendDisconnect websocket.StatusCode = 4000

package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// What the edge does with its apps' hooks (edge/hook): the connect hook
// is asked in accept, before the upgrade, on the HTTP handler's
// goroutine; the subscribe and publish hooks on the connection's reader
// (edge/session), which they hold for at most the hook timeout; events
// are posted without blocking anyone.

// connIDs names the connections: a prefix of this edge run's, so that
// two edges (or two runs) do not share ids, and a sequence number.
type connIDs struct {
	run string        // this edge run's prefix of connection ids
	seq atomic.Uint64 // the last connection id's number
}

// startHooks makes the hooks of every app of apps, starting their events
// senders, with their channels' occupancy for the apps that post events.
func (s *Server) startHooks(apps []*app.App) error {
	s.ids.run = strconv.FormatUint(rand.Uint64()>>24, 36)
	for _, a := range apps {
		h, err := hook.New(a.Key, a.Hooks, &hook.Options{Edge: s.ids.run, Logger: s.log})
		if err != nil {
			s.closeHooks(context.Background())
			return fmt.Errorf("server: app %q: hooks: %w", a.Key, err)
		}
		if h == nil {
			continue
		}
		sa := s.apps[a.Key]
		sa.Hooks = h
		if ev := h.Events(); ev != nil {
			sa.Occupancy = hook.NewOccupancy(ev)
		}
	}
	return nil
}

// closeHooks delivers the events still queued until ctx ends and stops
// every events sender.
func (s *Server) closeHooks(ctx context.Context) {
	var wg sync.WaitGroup
	for _, a := range s.apps {
		if h := a.Hooks; h != nil {
			wg.Go(func() { h.Close(ctx) })
		}
	}
	wg.Wait()
}

// HookStats returns each app's hook and event counts, by appkey, for the
// apps that have hooks.
func (s *Server) HookStats() map[string]hook.Stats {
	out := make(map[string]hook.Stats)
	for k, a := range s.apps {
		if a.Hooks != nil {
			out[k] = a.Hooks.Stats()
		}
	}
	return out
}

// Events returns the events sender of an app (presence posts its joins
// and leaves there); nil, whose Post does nothing, when the app has none.
func (s *Server) Events(appKey string) *hook.Events {
	if a := s.apps[appKey]; a != nil {
		return a.Hooks.Events()
	}
	return nil
}

// newConnID returns a connection id unique to this edge's run: the run's
// random prefix and a sequence number.
func (s *Server) newConnID() string {
	return s.ids.run + "." + strconv.FormatUint(s.ids.seq.Add(1), 36)
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
func (s *Server) connectHook(w http.ResponseWriter, r *http.Request, a *session.App, id string) (*hook.ConnectAnswer, bool) {
	h := a.Hooks
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
		s.edge.Counters.Refuse(rtm.CodeUnavailable)
		s.RefuseRequest(w, r, http.StatusServiceUnavailable, string(rtm.CodeUnavailable), ans.Reason)
	default:
		s.edge.Counters.Refuse(rtm.CodeAuthorizationDenied)
		reason := ans.Reason
		if reason == "" {
			reason = "the app refused this connection"
		}
		s.RefuseRequest(w, r, http.StatusForbidden, string(rtm.CodeAuthorizationDenied), reason)
	}
	return nil, false
}

func joinValues(vs []string) string { return strings.Join(vs, ", ") }

// StatusBackendDisconnect is the close code of a connection the app's
// backend disconnected (the server API's disconnect): in the range RFC
// 6455 leaves to applications, so clients tell it from the edge's own.
const StatusBackendDisconnect websocket.StatusCode = 4000

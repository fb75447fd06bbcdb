package server

import (
	"encoding/json"
	"net/http"

	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// Refuse answers a request that cannot be served with a short JSON body
// {"error": code, "reason": reason}, as every refusal of the edge's is;
// nothing about the edge's configuration is leaked.
func Refuse(w http.ResponseWriter, status int, code, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "reason": reason})
}

// RefuseRequest is Refuse for a request to the WebSocket endpoint, or one
// refused before it got there (the listener's per-address limit). A
// browser hides why a WebSocket handshake failed, so the browser client
// fetches the same URL to read the refusal; from a page of another origin
// it may read it only with CORS, which it gets when its origin may connect
// (allowed_origins). The request is a simple GET, so no preflight.
func (s *Server) RefuseRequest(w http.ResponseWriter, r *http.Request, status int, code, reason string) {
	if origin := r.Header.Get("Origin"); origin != "" {
		w.Header().Add("Vary", "Origin")
		if websocket.OriginAllowed(r, s.acceptOptions()) {
			w.Header().Set("Access-Control-Allow-Origin", origin)
		}
	}
	Refuse(w, status, code, reason)
}

// subprotocols are the WebSocket subprotocols the edge accepts: its
// codecs' names.
var subprotocols = payload.Names()

// acceptOptions are the options of the WebSocket upgrade.
func (s *Server) acceptOptions() *websocket.AcceptOptions {
	return &websocket.AcceptOptions{
		Subprotocols:   subprotocols,
		AnyOrigin:      s.origins.any,
		OriginPatterns: s.origins.patterns,
	}
}

// accept checks the appkey and the connection limit before the upgrade,
// then hands the connection to a goroutine of its own and returns: the
// HTTP server's goroutine and its buffers (some 14 KiB) are released
// instead of being held for the connection's life.
func (s *Server) accept(w http.ResponseWriter, r *http.Request) {
	a, id, grant, ok := s.admit(w, r)
	if !ok {
		return
	}
	opts := s.acceptOptions()
	if a.Deflate {
		opts.Deflate = &websocket.DeflateOptions{Threshold: a.DeflateThreshold}
	}
	ws, err := websocket.Accept(w, r, opts)
	if err != nil {
		// Accept has answered a bad handshake or a forbidden origin.
		s.leave()
		s.log.Debug("websocket upgrade refused", "remote", r.RemoteAddr, "err", err)
		return
	}
	s.start(ws, r.RemoteAddr, a, id, grant, nil)
}

// admit checks what every connection attempt must pass, WebSocket or
// HTTP stream: the appkey, the shutdown, the connection limit and the
// app's connect hook. On refusal it has answered; on success the caller
// starts the connection or calls leave.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (*session.App, string, *hook.ConnectAnswer, bool) {
	key := r.URL.Query().Get("appkey")
	a, ok := s.apps[key]
	if !ok {
		reason := "unknown appkey"
		if key == "" {
			reason = "missing appkey query parameter"
		}
		s.edge.Counters.Refuse(rtm.CodeInvalidAppkey)
		s.RefuseRequest(w, r, http.StatusUnauthorized, string(rtm.CodeInvalidAppkey), reason)
		return nil, "", nil, false
	}
	if !s.enter() {
		s.edge.Counters.Refuse(rtm.CodeUnavailable)
		s.RefuseRequest(w, r, http.StatusServiceUnavailable, string(rtm.CodeUnavailable), "edge is shutting down; reconnect elsewhere")
		return nil, "", nil, false
	}
	if n := s.conns.active.Add(1); n > int64(s.limits.Connections) {
		s.leave()
		s.edge.Counters.Refuse(tally.CodeTooManyConnections)
		s.RefuseRequest(w, r, http.StatusServiceUnavailable, string(tally.CodeTooManyConnections), "edge is at its connection limit")
		return nil, "", nil, false
	}
	id := s.newConnID()
	grant, ok := s.connectHook(w, r, a, id)
	if !ok {
		s.leave()
		return nil, "", nil, false
	}
	return a, id, grant, true
}

// start runs the session of the upgraded connection ws on a goroutine
// of its own, and then ended (nil: nothing) once it is over.
func (s *Server) start(ws *websocket.Conn, remote string, a *session.App, id string, grant *hook.ConnectAnswer, ended func()) *session.Session {
	if d := s.limits.FrameTimeout; d > 0 {
		ws.SetFrameTimeout(d) // else the websocket package's default
	}
	s.edge.Counters.ConnectionsTotal.Add(1)
	c := session.New(s.edge, a, ws, remote, id)
	c.Connect(grant)
	s.track(c)
	// Counted before it can subscribe, so that messages published from
	// then on are stored in its codec too.
	s.edge.Codecs.Opened(c.CodecIndex())
	go func() {
		defer s.leave()
		defer s.untrack(c)
		defer s.edge.Codecs.Closed(c.CodecIndex())
		if ended != nil {
			defer ended()
		}
		c.Run()
	}()
	return c
}

// leave ends a connection attempt that enter admitted and that counted
// itself in active.
func (s *Server) leave() {
	s.conns.active.Add(-1)
	s.conns.wg.Done()
}

package server

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"

	"github.com/coder/websocket"
)

// refuse answers a request that cannot be upgraded with a short JSON body;
// nothing about the edge's configuration is leaked.
func refuse(w http.ResponseWriter, status int, code, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "reason": reason})
}

// accept checks the appkey and the connection limit before the upgrade,
// then runs the connection until it ends.
func (s *Server) accept(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("appkey")
	a, ok := s.apps[key]
	if !ok {
		reason := "unknown appkey"
		if key == "" {
			reason = "missing appkey query parameter"
		}
		refuse(w, http.StatusUnauthorized, "invalid_appkey", reason)
		return
	}
	if !s.enter() {
		refuse(w, http.StatusServiceUnavailable, "unavailable", "edge is shutting down; reconnect elsewhere")
		return
	}
	defer s.wg.Done()
	if n := s.active.Add(1); n > int64(s.limits.Connections) {
		s.active.Add(-1)
		refuse(w, http.StatusServiceUnavailable, "too_many_connections", "edge is at its connection limit")
		return
	}
	defer s.active.Add(-1)

	hj := &hijackRecorder{ResponseWriter: w}
	ws, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		Subprotocols:       codecNames,
		InsecureSkipVerify: s.anyOrigin,
		OriginPatterns:     s.origins,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		// Accept has already written the HTTP error (bad handshake or a
		// forbidden origin).
		s.log.Debug("websocket upgrade refused", "remote", r.RemoteAddr, "err", err)
		return
	}
	s.counters.connectionsTotal.Add(1)
	c := newConn(s, a, ws, r.RemoteAddr)
	c.raw = hj.conn
	s.track(c)
	defer s.untrack(c)
	c.run()
}

// hijackRecorder hands the ResponseWriter to websocket.Accept and keeps
// the connection Accept hijacks, so that abort can cut it even during a
// close handshake, which the WebSocket library otherwise waits out for up
// to 5 seconds whatever the shutdown deadline.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

// Hijack implements http.Hijacker.
func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = c
	return c, rw, err
}

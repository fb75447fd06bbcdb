package server

import "github.com/sluicehq/sluice/edge/session"

// What the external tests (package server_test) see of the edge's
// insides.

// MaxInFlight is how many of a connection's publishes may wait for the
// journal at once.
const MaxInFlight = session.MaxInFlight

// ReplyQueue reports, for the edge's only connection, the bytes of the
// replies its outbox holds and how many times its reader has waited for
// the writer to take them (edge/session's acks.go, pushAck); ok is false
// unless the edge has exactly one connection.
func ReplyQueue(s *Server) (bytes, waits int, ok bool) {
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	if len(s.conns.open) != 1 {
		return 0, 0, false
	}
	for c := range s.conns.open {
		bytes, waits = c.Backlog()
	}
	return bytes, waits, true
}

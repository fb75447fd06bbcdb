package server

import "testing"

// What the external tests (package server_test) see of the edge's
// insides: they start edges through servertest, which package server's
// own tests cannot import.

// ServeEdge serves an edge with opts on a loopback port until tb ends,
// and returns it with its ws:// URL. It is servertest.Start, which the
// external tests' init sets here: package server's own tests cannot
// import servertest (an import cycle), and start their edges through it
// all the same.
var ServeEdge func(tb testing.TB, opts *Options) (srv *Server, url string)

// MaxInFlight is how many of a connection's publishes may wait for the
// journal at once.
const MaxInFlight = maxInFlight

// ReplyQueue reports, for the edge's only connection, the bytes of the
// replies its outbox holds and how many times its reader has waited for
// the writer to take them (acks.go, pushAck); ok is false unless the
// edge has exactly one connection.
func ReplyQueue(s *Server) (bytes, waits int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) != 1 {
		return 0, 0, false
	}
	for c := range s.conns {
		c.acks.mu.Lock()
		waits = c.acks.roomWaits
		c.acks.mu.Unlock()
		bytes = c.QueuedBytes()
	}
	return bytes, waits, true
}

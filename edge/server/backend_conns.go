package server

import (
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The server API's methods on connections (edge/api disconnect and
// unsubscribe). They reach the connections of this edge: in a cluster a
// backend calls each edge (each answers how many it had).

// reasonBackendUnsubscribe is the reason of the rtm/subscription/error
// that ends a subscription the app's backend ended.
const reasonBackendUnsubscribe = "the app's backend ended this subscription"

// MaxConnectionIDBytes bounds a connection id the API is given (to
// exclude from a publish): the edge's own are about 15 bytes.
const MaxConnectionIDBytes = store.MaxOriginBytes

// MaxCloseReasonBytes bounds a disconnect's reason: a WebSocket close
// frame has room for 123 bytes of it.
const MaxCloseReasonBytes = 123

// matching returns the app's open connections with id connection (when
// set) and user (when set); at least one must be set.
func (s *Server) matching(appKey, connection, user string) ([]*session.Session, error) {
	if connection == "" && user == "" {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "name a connection or a user")
	}
	s.conns.mu.Lock()
	defer s.conns.mu.Unlock()
	var out []*session.Session
	for c := range s.conns.open {
		if c.AppKey() != appKey || (connection != "" && c.ID() != connection) || (user != "" && c.UserID() != user) {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// BackendDisconnect closes the app's connections on this edge that have
// the id connection or belong to user (or both, when both are set) with
// close code 4000 (StatusBackendDisconnect) and reason (default "disconnected by
// the app's backend"), and returns how many it closed. Clients reconnect
// as after any close; the connect hook, if any, decides again.
func (s *Server) BackendDisconnect(appKey, connection, user, reason string) (int, error) {
	if len(reason) > MaxCloseReasonBytes {
		return 0, rtm.Errorf(rtm.CodeInvalidFormat, "reason is longer than %d bytes", MaxCloseReasonBytes)
	}
	if reason == "" {
		reason = "disconnected by the app's backend"
	}
	conns, err := s.matching(appKey, connection, user)
	if err != nil {
		return 0, err
	}
	for _, c := range conns {
		c.CloseWith(StatusBackendDisconnect, reason)
	}
	return len(conns), nil
}

// BackendUnsubscribe ends the subscriptions to channel of the app's
// connections on this edge that have the id connection or belong to
// user: each gets rtm/subscription/error authorization_denied with the
// position to resume from (the subscribe hook, if any, decides a
// resubscribe). It returns how many subscriptions it ended.
func (s *Server) BackendUnsubscribe(appKey, connection, user, channel string) (int, error) {
	if err := session.CheckChannel(channel); err != nil {
		return 0, err
	}
	conns, err := s.matching(appKey, connection, user)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range conns {
		n += c.EndChannel(channel, reasonBackendUnsubscribe)
	}
	return n, nil
}

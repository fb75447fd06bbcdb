package server

import (
	"fmt"

	"github.com/sluicehq/sluice/edge/membership"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/shared/rtm"
)

// BackendPresence returns a page of an app's channel's members for its
// backend (the server API): up to limit (0: rtm.DefaultPresenceLimit, at
// most rtm.MaxPresenceLimit) members whose user ids sort after after.
func (s *Server) BackendPresence(appKey, channel, after string, limit int) (*rtm.PresenceReply, error) {
	a, ok := s.apps[appKey]
	if !ok {
		return nil, fmt.Errorf("server: backend presence: unknown appkey %q", appKey)
	}
	if err := session.CheckChannel(channel); err != nil {
		return nil, err
	}
	if limit < 0 || limit > rtm.MaxPresenceLimit {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "limit must be between 1 and %d (0: %d)", rtm.MaxPresenceLimit, rtm.DefaultPresenceLimit)
	}
	if len(after) > rtm.MaxUserIDLen {
		return nil, rtm.TooLong("after", rtm.MaxUserIDLen)
	}
	return membership.Reply(s.edge.Presence.Members(a.StoreKey(channel), after, limit)), nil
}

// BackendPresenceStats returns an app's channel's members and connections
// (anonymous ones included) for its backend, in O(1).
func (s *Server) BackendPresenceStats(appKey, channel string) (users, conns int, err error) {
	a, ok := s.apps[appKey]
	if !ok {
		return 0, 0, fmt.Errorf("server: backend presence stats: unknown appkey %q", appKey)
	}
	if err := session.CheckChannel(channel); err != nil {
		return 0, 0, err
	}
	users, conns = s.edge.Presence.Stats(a.StoreKey(channel))
	return users, conns, nil
}

// PresenceTotals returns this edge's own presence counts (see
// presence.Totals), for the server API's info.
func (s *Server) PresenceTotals() presence.Totals { return s.edge.Presence.Totals() }

package server

import (
	"fmt"

	"github.com/sluicehq/sluice/edge/membership"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/shared/rtm"
)

// presence serves rtm/presence (extension): a channel's counts and a page
// of its members, for a role with the presence permission. The page is
// read and queued with the channel's presence locked, so that it takes
// its place among the connection's presence pushes exactly where it was
// true: a client paging a large room's snapshot applies the pages and
// the joins and leaves in the order they come, and has the room.
func (c *conn) presence(env *rtm.Envelope) (any, error) {
	var b rtm.PresenceBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if err := checkChannel(b.Channel); err != nil {
		return nil, err
	}
	if b.Limit < 0 || b.Limit > rtm.MaxPresenceLimit {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "limit must be between 1 and %d (0: %d)", rtm.MaxPresenceLimit, rtm.DefaultPresenceLimit)
	}
	if !c.perms.CanPresence(b.Channel) {
		return nil, c.denied(env.Action, "see the presence of", b.Channel)
	}
	if env.ID.IsZero() {
		return nil, nil // no reply wanted: nothing to read
	}
	c.drainAcks() // the replies of the publishes before it go first
	var err error
	c.srv.presence.MembersFunc(c.app.StoreKey(b.Channel), b.After, int(b.Limit), func(p *presence.Page) {
		var frame []byte
		if frame, err = membership.Page(c.Codec(), env.ID, p, membership.Budget(c.srv.limits.QueueBytes)); err == nil {
			c.Enqueue(frame)
		}
	})
	return nil, err
}

// BackendPresence returns a page of an app's channel's members for its
// backend (the server API): up to limit (0: rtm.DefaultPresenceLimit, at
// most rtm.MaxPresenceLimit) members whose user ids sort after after.
func (s *Server) BackendPresence(appKey, channel, after string, limit int) (*rtm.PresenceReply, error) {
	a, ok := s.apps[appKey]
	if !ok {
		return nil, fmt.Errorf("server: backend presence: unknown appkey %q", appKey)
	}
	if err := checkChannel(channel); err != nil {
		return nil, err
	}
	if limit < 0 || limit > rtm.MaxPresenceLimit {
		return nil, rtm.Errorf(rtm.CodeInvalidFormat, "limit must be between 1 and %d (0: %d)", rtm.MaxPresenceLimit, rtm.DefaultPresenceLimit)
	}
	if len(after) > rtm.MaxUserIDLen {
		return nil, rtm.TooLong("after", rtm.MaxUserIDLen)
	}
	return membership.Reply(s.presence.Members(a.StoreKey(channel), after, limit)), nil
}

// BackendPresenceStats returns an app's channel's members and connections
// (anonymous ones included) for its backend, in O(1).
func (s *Server) BackendPresenceStats(appKey, channel string) (users, conns int, err error) {
	a, ok := s.apps[appKey]
	if !ok {
		return 0, 0, fmt.Errorf("server: backend presence stats: unknown appkey %q", appKey)
	}
	if err := checkChannel(channel); err != nil {
		return 0, 0, err
	}
	users, conns = s.presence.Stats(a.StoreKey(channel))
	return users, conns, nil
}

// PresenceTotals returns this edge's own presence counts (see
// presence.Totals), for the server API's info.
func (s *Server) PresenceTotals() presence.Totals { return s.presence.Totals() }

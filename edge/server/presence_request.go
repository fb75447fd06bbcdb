package server

import (
	"fmt"

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
		if frame, err = c.presencePage(env.ID, p); err == nil {
			c.Enqueue(frame)
		}
	})
	return nil, err
}

// presencePage encodes the reply of rtm/presence with page p, cut to the
// connection's presence budget (next then names the last member sent).
func (c *conn) presencePage(id rtm.ID, p *presence.Page) ([]byte, error) {
	all := rtmMembers(p.Members)
	r := &rtm.PresenceReply{Users: int64(p.Users), Connections: int64(p.Connections)}
	pdu := &rtm.PDU{Action: rtm.Reply(rtm.ActionPresence, rtm.OutcomeOK), ID: id, Body: r}
	frame, err := c.fitMembers(all, func(ms []rtm.PresenceMember) ([]byte, error) {
		r.Members, r.Next = ms, p.Next
		if len(ms) < len(all) {
			r.Next = ms[len(ms)-1].UserID
		}
		return c.Codec().AppendPDU(nil, pdu)
	})
	if err != nil {
		return nil, fmt.Errorf("server: encode a presence page: %w", err)
	}
	return frame, nil
}

// presenceBudget is the most bytes a presence snapshot or page takes of
// the connection's queue: a quarter of it, so that a large room's does
// not close a connection that reads.
func (c *conn) presenceBudget() int { return max(c.srv.limits.QueueBytes/4, 1) }

// fitMembers encodes the first n members of ms with encode, for the
// largest n it tries (all of them first, then fewer; at least 1) whose
// frame fits the presence budget.
func (c *conn) fitMembers(ms []rtm.PresenceMember, encode func([]rtm.PresenceMember) ([]byte, error)) ([]byte, error) {
	budget := c.presenceBudget()
	n := len(ms)
	for {
		frame, err := encode(ms[:n])
		if err != nil || len(frame) <= budget || n <= 1 {
			return frame, err
		}
		// A share in proportion to what fitted, or half, whichever is
		// fewer: a frame need not be encoded many times.
		n = max(1, min(n/2, int(int64(n)*int64(budget)/int64(len(frame))*9/10)))
	}
}

// rtmMembers turns registry members into the wire's.
func rtmMembers(ms []presence.Member) []rtm.PresenceMember {
	out := make([]rtm.PresenceMember, len(ms))
	for i, m := range ms {
		out[i] = rtm.PresenceMember{UserID: m.UserID, Info: m.Info, Connections: int64(m.Connections)}
	}
	return out
}

// presenceReply turns a registry page into the reply's body.
func presenceReply(p presence.Page) *rtm.PresenceReply {
	return &rtm.PresenceReply{Users: int64(p.Users), Connections: int64(p.Connections), Next: p.Next,
		Members: rtmMembers(p.Members)}
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
	return presenceReply(s.presence.Members(a.StoreKey(channel), after, limit)), nil
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

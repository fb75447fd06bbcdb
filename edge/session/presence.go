package session

import (
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
func (c *Session) presence(env *rtm.Envelope) (any, error) {
	var b rtm.PresenceBody
	if err := c.decode(env, &b); err != nil {
		return nil, err
	}
	if err := CheckChannel(b.Channel); err != nil {
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
	c.edge.Presence.MembersFunc(c.app.StoreKey(b.Channel), b.After, int(b.Limit), func(p *presence.Page) {
		var frame []byte
		if frame, err = membership.Page(c.Codec(), env.ID, p, membership.Budget(c.edge.Limits.QueueBytes)); err == nil {
			c.Enqueue(frame)
		}
	})
	return nil, err
}

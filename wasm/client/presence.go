package client

import (
	"context"
	"strconv"

	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// Member is one user present in a channel (Sluice's presence extension):
// its user id (a token's sub), the info its token or the app's connect
// hook gave, and how many of its connections are in the channel (0 where
// the edge did not say: in joins and leaves).
type Member struct {
	UserID      string
	Info        any
	Connections int
}

// PresencePage is one page of a channel's members, from Client.Presence.
type PresencePage struct {
	Members []Member
	// Users and Connections are the channel's counts: members, and
	// connections (anonymous ones included).
	Users, Connections int
	// Next, when set, is the after of the next page.
	Next string
}

// Presence returns the channel's counts and up to limit of its members
// (0: the edge's default, 100; at most 1000) whose user ids sort after
// after, in order: the rtm/presence extension, which needs the presence
// permission on the channel.
func (c *Client) Presence(ctx context.Context, channel, after string, limit int) (*PresencePage, error) {
	if err := rtm.ValidateChannel(channel); err != nil {
		return nil, errtext.Wrap("client: presence "+strconv.Quote(channel), err)
	}
	var r rtm.PresenceReply
	if err := c.do(ctx, rtm.ActionPresence, &rtm.PresenceBody{Channel: channel, After: after, Limit: int64(limit)}, &r); err != nil {
		return nil, errtext.Wrap("client: presence "+strconv.Quote(channel), err)
	}
	return &PresencePage{Members: members(r.Members), Users: int(r.Users), Connections: int(r.Connections), Next: r.Next}, nil
}

func members(ms []rtm.PresenceMember) []Member {
	out := make([]Member, len(ms))
	for i, m := range ms {
		out[i] = Member{UserID: m.UserID, Info: m.Info, Connections: int(m.Connections)}
	}
	return out
}

// subPresence is what a presence subscription knows of its channel's
// members; guarded by Client.mu.
type subPresence struct {
	members map[string]Member // as of the last snapshot and the changes after it
	known   bool              // a snapshot has completed since Subscribe
	// parts is the snapshot being made, nil when none is: the edge's
	// first members, the pages of the rest (presence_page.go) and the
	// joins and leaves since, applied in the order they came.
	parts map[string]Member
	// gen counts the snapshots begun, so that the page of one given up
	// (a reconnect began another) is dropped.
	gen   uint64
	users int
	conns int
}

// abandonLocked gives up the snapshot being made, if any: a lost
// connection's resubscription begins another.
func (sp *subPresence) abandonLocked() {
	sp.parts = nil
	sp.gen++
}

// Members returns the channel's members as the subscription knows them
// (from the edge's snapshot and every join and leave since), in user id
// order; nil for a subscription without SubscribeOptions.Presence.
func (s *Subscription) Members() []Member {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.pres == nil {
		return nil
	}
	out := make([]Member, 0, len(s.pres.members))
	for _, m := range s.pres.members {
		out = append(out, m)
	}
	sortMembers(out)
	return out
}

// PresenceCounts returns the channel's members and connections (anonymous
// ones included) as the edge last said.
func (s *Subscription) PresenceCounts() (users, conns int) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	if s.pres == nil {
		return 0, 0
	}
	return s.pres.users, s.pres.conns
}

// PresenceEvent is what OnPresence hears.
type PresenceEvent struct {
	// Kind is PresenceMembers (Members are the channel's members, first
	// known), PresenceJoin or PresenceLeave (Members holds the one who
	// joined or left), or PresenceCount (anonymous connections came or
	// went: no Members, new counts).
	Kind    string
	Members []Member
	// Users and Connections are the channel's counts as the edge last
	// said: members, and connections (anonymous ones included).
	Users, Connections int
}

// The kinds of PresenceEvent.
const (
	PresenceMembers = rtm.PresenceMembers
	PresenceJoin    = rtm.PresenceJoin
	PresenceLeave   = rtm.PresenceLeave
	PresenceCount   = rtm.PresenceCount // anonymous connections came or went: only the counts changed
)

// presenceChange is an evPresence event's content: the members of a
// first snapshot, or who joined and left, and the counts after.
type presenceChange struct {
	snapshot     []Member // the first snapshot, complete
	joined, left []Member
	count        bool // only the counts changed
	users, conns int
}

// onPresence applies an rtm/subscription/presence push, on the reader
// goroutine. A snapshot whose first part says more is completed by
// paging the rest with rtm/presence (presence_page.go); the joins and
// leaves meanwhile go into it, not to the application. A snapshot after
// a resubscription (a reconnect) is compared with what the subscription
// knew: the application hears who joined and left meanwhile, never the
// whole room again.
func (c *Client) onPresence(cn *conn, p *rtm.SubscriptionPresence) {
	var page *presencePage
	c.mu.Lock()
	s := c.routeLocked(cn, p.SubscriptionID)
	if s != nil && s.pres != nil {
		page = c.applyPresenceLocked(cn, s, p)
	}
	c.mu.Unlock()
	if page != nil {
		c.askPage(page)
	}
}

// applyPresenceLocked applies a push to s's members and returns the page
// to ask for next, if the snapshot it begins has more.
func (c *Client) applyPresenceLocked(cn *conn, s *Subscription, p *rtm.SubscriptionPresence) *presencePage {
	sp := s.pres
	sp.users, sp.conns = int(p.Users), int(p.Connections)
	var ch presenceChange
	switch p.Event {
	case rtm.PresenceMembers:
		// Each watch begins with one: a snapshot begins, and the pages
		// of any other one being made are dropped.
		sp.abandonLocked()
		sp.parts = make(map[string]Member, len(p.Members))
		for _, m := range members(p.Members) {
			sp.parts[m.UserID] = m
		}
		if p.More && s.channel != "" {
			after := ""
			if n := len(p.Members); n > 0 {
				after = p.Members[n-1].UserID
			}
			return &presencePage{cn: cn, s: s, gen: sp.gen, after: after}
		}
		ch = sp.completeLocked()
	case rtm.PresenceJoin:
		for _, m := range members(p.Members) {
			if sp.parts != nil {
				sp.parts[m.UserID] = m
			} else if _, dup := sp.members[m.UserID]; !dup {
				sp.members[m.UserID] = m
				ch.joined = append(ch.joined, m)
			}
		}
	case rtm.PresenceLeave:
		for _, m := range members(p.Members) {
			if sp.parts != nil {
				delete(sp.parts, m.UserID)
			} else if _, ok := sp.members[m.UserID]; ok {
				delete(sp.members, m.UserID)
				ch.left = append(ch.left, m)
			}
		}
	case rtm.PresenceCount:
		ch.count = sp.parts == nil
	default:
		return nil
	}
	c.hearLocked(s, &ch)
	return nil
}

// hearLocked queues a change of s's members for its OnPresence, unless
// it is none.
func (c *Client) hearLocked(s *Subscription, ch *presenceChange) {
	if ch.snapshot == nil && len(ch.joined)+len(ch.left) == 0 && !ch.count {
		return
	}
	ch.users, ch.conns = s.pres.users, s.pres.conns
	c.enqueueLocked(event{kind: evPresence, sub: s, presence: ch})
}

// completeLocked makes the snapshot that was made the members and returns
// the change it is.
func (sp *subPresence) completeLocked() presenceChange {
	next := sp.parts
	var ch presenceChange
	if !sp.known {
		ch.snapshot = make([]Member, 0, len(next))
		for _, m := range next {
			ch.snapshot = append(ch.snapshot, m)
		}
		sortMembers(ch.snapshot)
	} else {
		for id, m := range next {
			if _, ok := sp.members[id]; !ok {
				ch.joined = append(ch.joined, m)
			}
		}
		for id, m := range sp.members {
			if _, ok := next[id]; !ok {
				ch.left = append(ch.left, m)
			}
		}
	}
	sp.members, sp.parts, sp.known = next, nil, true
	return ch
}

// handPresence runs a subscription's OnPresence, on the delivery
// goroutine: the first snapshot, then the leaves and joins one by one.
func (c *Client) handPresence(s *Subscription, ch *presenceChange) {
	on := s.opts.OnPresence
	if on == nil {
		return
	}
	hear := func(kind string, ms []Member) {
		if !s.ended.Load() {
			on(PresenceEvent{Kind: kind, Members: ms, Users: ch.users, Connections: ch.conns})
		}
	}
	if ch.snapshot != nil {
		hear(PresenceMembers, ch.snapshot)
	}
	for _, m := range ch.left {
		hear(PresenceLeave, []Member{m})
	}
	for _, m := range ch.joined {
		hear(PresenceJoin, []Member{m})
	}
	if ch.count {
		hear(PresenceCount, nil)
	}
}

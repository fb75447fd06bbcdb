package client

import "github.com/sluicehq/sluice/shared/rtm"

// A room larger than what the edge puts in a snapshot (500 members, and
// what fits a quarter of the connection's queue) comes as its first
// members with more: the client asks for the rest with rtm/presence, a
// page at a time, each from the last member it has. The edge queues a
// page's reply where it was true among the subscription's pushes, so the
// first part, the pages and the joins and leaves between them, applied
// in the order they come (on the reader goroutine), are the room. Asking
// for the next page only once the last one came is the flow control: the
// edge's queue never holds more than one page of it.

// presencePage is the next page a snapshot needs.
type presencePage struct {
	cn    *conn
	s     *Subscription
	gen   uint64 // the snapshot's (subPresence.gen)
	after string
}

// askPage sends the request for a page, without holding c.mu; its reply
// runs on the reader goroutine. A request that cannot be sent leaves the
// snapshot to the resubscription that follows the lost connection.
func (c *Client) askPage(p *presencePage) {
	body := &rtm.PresenceBody{Channel: p.s.channel, After: p.after, Limit: rtm.MaxPresenceLimit}
	err := p.cn.sendAsync(rtm.ActionPresence, body, func(cl *call) { c.onPage(p, cl) })
	if err != nil {
		c.log.Debug("sluice client: presence page not asked", "channel", p.s.channel, "err", err)
	}
}

// onPage applies a page of the snapshot p belongs to, if that snapshot is
// still being made, and asks for the next or completes it.
func (c *Client) onPage(p *presencePage, cl *call) {
	if cl.err != nil {
		return // the connection is gone: its resubscription begins another snapshot
	}
	var r rtm.PresenceReply
	err := p.cn.decodeReply(cl, &r)
	var next *presencePage
	c.mu.Lock()
	s := p.s
	sp := s.pres
	switch {
	case c.closed || s.finished || s.conn != p.cn || sp == nil || sp.parts == nil || sp.gen != p.gen:
		// Given up, or ended: nothing to apply.
	case err != nil:
		c.log.Warn("sluice client: a presence page was refused; the members stay as they were", "channel", s.channel, "err", err)
		sp.abandonLocked()
	default:
		sp.users, sp.conns = int(r.Users), int(r.Connections)
		for _, m := range members(r.Members) {
			sp.parts[m.UserID] = m
		}
		if r.Next != "" {
			next = &presencePage{cn: p.cn, s: s, gen: p.gen, after: r.Next}
			break
		}
		ch := sp.completeLocked()
		c.hearLocked(s, &ch)
	}
	c.mu.Unlock()
	if next != nil {
		c.askPage(next)
	}
}

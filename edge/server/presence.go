package server

import (
	"encoding/json"
	"sync"

	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Presence (extension). A connection is a member of every channel it has a
// live subscription to, under its user id (anonymous without one); a
// subscription with presence: true also watches the channel. What the
// registry holds follows its live subscriptions: every change of them, and of the
// connection's identity, ends with syncPresence, which applies the
// difference. Lock order: grantTimer.mu before connPresence.mu before the
// registry's shard locks before delivery.Conn.mu (the watchers take it).

// connPresence is a connection's identity and what of it the registry
// holds.
type connPresence struct {
	mu sync.Mutex // guards the fields below; serialises syncPresence
	// user and info are the connection's identity (user "" is anonymous);
	// fromGrant says a JWT grant set them, so they end with it.
	user      string
	info      any
	fromGrant bool
	// joinedAs is the user id the connection's rooms hold it as; joined
	// the rooms (store keys) it is in; watching its watches by
	// subscription.
	joinedAs string
	joined   map[string]struct{}
	watching map[*delivery.Subscription]*presenceWatch
	closed   bool // set once the connection ended: it is in no room
}

// setUser gives the connection a user id ("" for anonymous) and info, as
// its token or the app's connect hook says; its rooms see it leave as the
// old user and join as the new. For the reader goroutine (or before the
// connection serves requests).
func (c *conn) setUser(user string, info any, fromGrant bool) {
	p := &c.pres
	p.mu.Lock()
	p.user, p.info, p.fromGrant = user, info, fromGrant
	p.mu.Unlock()
	c.syncPresence()
}

// userID is the connection's user: what its JWT's sub or its connect
// hook named; "" for anonymous.
func (c *conn) userID() string {
	c.pres.mu.Lock()
	defer c.pres.mu.Unlock()
	return c.pres.user
}

// endGrantUser drops the identity a JWT grant gave once the grant has
// ended: an expired token proves no user any more.
func (c *conn) endGrantUser() {
	p := &c.pres
	p.mu.Lock()
	if p.fromGrant {
		p.user, p.info, p.fromGrant = "", nil, false
	}
	p.mu.Unlock()
	c.syncPresence()
}

// leavePresence takes the connection out of every room, for good.
func (c *conn) leavePresence() {
	c.pres.mu.Lock()
	c.pres.closed = true
	c.pres.mu.Unlock()
	c.syncPresence()
}

// syncPresence makes the registry hold what the live subscriptions and
// the identity say:
// it leaves the rooms of channels no live subscription is on any more,
// joins the new ones (before watching, so that a watcher's snapshot has
// the watcher in it) and starts and stops the watches. It does nothing
// on a connection whose rooms are as they should be, and is safe from any
// goroutine that holds neither c.mu nor a registry lock.
func (c *conn) syncPresence() {
	p := &c.pres
	p.mu.Lock()
	defer p.mu.Unlock()
	reg := c.srv.presence
	live := c.Live() // copy-on-write: a snapshot
	if p.closed {
		live = nil
	}
	want := make(map[string]struct{}, len(live))
	for _, sub := range live {
		want[c.app.StoreKey(sub.Channel)] = struct{}{}
	}
	if p.joinedAs != p.user {
		// In as the new user before out as the old, so that the counts
		// of the leave are those of the room after the change.
		for room := range p.joined {
			c.presenceEvent(reg.Add(room, p.user, p.info), hook.KindPresenceJoin, room, p.user, p.info)
			c.presenceEvent(reg.Remove(room, p.joinedAs), hook.KindPresenceLeave, room, p.joinedAs, nil)
		}
		p.joinedAs = p.user
	}
	for room := range p.joined {
		if _, ok := want[room]; !ok {
			c.presenceEvent(reg.Remove(room, p.joinedAs), hook.KindPresenceLeave, room, p.joinedAs, nil)
			delete(p.joined, room)
		}
	}
	for room := range want {
		if _, ok := p.joined[room]; !ok {
			if p.joined == nil {
				p.joined = make(map[string]struct{})
			}
			c.presenceEvent(reg.Add(room, p.joinedAs, p.info), hook.KindPresenceJoin, room, p.joinedAs, p.info)
			p.joined[room] = struct{}{}
		}
	}
	c.syncWatches(p, live)
}

// presenceEvent posts a presence_join or presence_leave event to the
// app's backend when happened (the user came into room or left it on this
// edge) and the app listens for events.
func (c *conn) presenceEvent(happened bool, kind, room, user string, info any) {
	ev := c.hooks.Events()
	if !happened || ev == nil {
		return
	}
	d := hook.PresenceData{Channel: room[len(c.app.Key)+1:], Connection: c.ID(), User: user}
	if info != nil {
		d.Info, _ = json.Marshal(info) // decoded from JSON: it encodes
	}
	_ = ev.Post(kind, d) // counted when dropped
}

// syncWatches starts a watch for each live presence subscription without
// one and stops those of subscriptions that ended; p.mu is held.
func (c *conn) syncWatches(p *connPresence, live []*delivery.Subscription) {
	for sub, w := range p.watching {
		if !containsSub(live, sub) {
			c.srv.presence.Unwatch(w.room, w)
			delete(p.watching, sub)
		}
	}
	for _, sub := range live {
		if !sub.Presence || p.watching[sub] != nil {
			continue
		}
		if p.watching == nil {
			p.watching = make(map[*delivery.Subscription]*presenceWatch)
		}
		w := &presenceWatch{c: c, sub: sub, room: c.app.StoreKey(sub.Channel)}
		p.watching[sub] = w
		c.srv.presence.Watch(w.room, w)
	}
}

func containsSub(live []*delivery.Subscription, sub *delivery.Subscription) bool {
	for _, s := range live {
		if s == sub {
			return true
		}
	}
	return false
}

// presenceWatch is a presence subscription's watch of its channel: it
// queues rtm/subscription/presence pushes for the connection's writer.
type presenceWatch struct {
	c    *conn
	sub  *delivery.Subscription
	room string
}

// PresenceSnapshot implements presence.Watcher: it queues the snapshot,
// cut to the connection's presence budget (fitMembers); more tells the
// client to page the rest with rtm/presence, whose replies come in order
// with this watch's pushes (presencePage).
func (w *presenceWatch) PresenceSnapshot(_ string, members []presence.Member, more bool, users, conns int) {
	all := rtmMembers(members)
	body := &rtm.SubscriptionPresence{SubscriptionID: w.sub.ID, Event: rtm.PresenceMembers,
		Users: int64(users), Connections: int64(conns)}
	frame, err := w.c.fitMembers(all, func(ms []rtm.PresenceMember) ([]byte, error) {
		body.Members, body.More = ms, more || len(ms) < len(all)
		return w.c.Codec().AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionPresence, Body: body})
	})
	if err != nil {
		w.c.srv.log.Error("presence snapshot not encoded", "appkey", w.c.app.Key, "err", err)
		return
	}
	w.push(frame)
}

// PresenceChanged implements presence.Watcher. The frame is encoded once
// per codec and subscription id (most subscriptions' id is their channel)
// and shared by every watcher that has the same.
func (w *presenceWatch) PresenceChanged(ev *presence.Event) {
	memo := &ev.Memo[w.c.CodecIndex()]
	if memo.Frame == nil || memo.Key != w.sub.ID {
		body := &rtm.SubscriptionPresence{SubscriptionID: w.sub.ID, Event: ev.Kind.String(),
			Members: []rtm.PresenceMember{}, Users: int64(ev.Users), Connections: int64(ev.Connections)}
		if ev.Kind != presence.Count {
			body.Members = []rtm.PresenceMember{{UserID: ev.Member.UserID, Info: ev.Member.Info}}
		}
		frame, err := w.c.Codec().AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionPresence, Body: body})
		if err != nil {
			w.c.srv.log.Error("presence event not encoded", "appkey", w.c.app.Key, "err", err)
			return
		}
		memo.Key, memo.Frame = w.sub.ID, frame
	}
	w.push(memo.Frame)
}

// push queues a presence frame, unless its subscription has ended
// (delivery.Conn.PushPresence).
func (w *presenceWatch) push(frame []byte) { w.c.PushPresence(w.sub, frame) }

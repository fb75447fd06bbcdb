package membership

import (
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/shared/rtm"
)

// syncWatches starts a watch for each live presence subscription without
// one and stops those of subscriptions that ended; p.mu is held.
func (p *Presence) syncWatches(live []*delivery.Subscription) {
	r := &p.rooms
	for sub, w := range r.watching {
		if !containsSub(live, sub) {
			p.reg.Unwatch(w.room, w)
			delete(r.watching, sub)
		}
	}
	for _, sub := range live {
		if !sub.Presence || r.watching[sub] != nil {
			continue
		}
		if r.watching == nil {
			r.watching = make(map[*delivery.Subscription]*watch)
		}
		w := &watch{p: p, sub: sub, room: p.room(sub)}
		r.watching[sub] = w
		p.reg.Watch(w.room, w)
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

// watch is a presence subscription's watch of its channel: it queues
// rtm/subscription/presence pushes for the connection's writer.
type watch struct {
	p    *Presence
	sub  *delivery.Subscription
	room string
}

// PresenceSnapshot implements presence.Watcher: it queues the snapshot,
// cut to the connection's presence budget (Fit); more tells the client to
// page the rest with rtm/presence, whose replies come in order with this
// watch's pushes (Page).
func (w *watch) PresenceSnapshot(_ string, members []presence.Member, more bool, users, conns int) {
	c := w.p.conn
	all := Members(members)
	body := &rtm.SubscriptionPresence{SubscriptionID: w.sub.ID, Event: rtm.PresenceMembers,
		Users: int64(users), Connections: int64(conns)}
	frame, err := Fit(all, w.p.budget, func(ms []rtm.PresenceMember) ([]byte, error) {
		body.Members, body.More = ms, more || len(ms) < len(all)
		return c.Codec().AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionPresence, Body: body})
	})
	if err != nil {
		w.p.log.Error("presence snapshot not encoded", "appkey", w.p.app.Key, "err", err)
		return
	}
	c.PushPresence(w.sub, frame)
}

// PresenceChanged implements presence.Watcher. The frame is encoded once
// per codec and subscription id (most subscriptions' id is their channel)
// and shared by every watcher that has the same.
func (w *watch) PresenceChanged(ev *presence.Event) {
	c := w.p.conn
	memo := &ev.Memo[c.CodecIndex()]
	if memo.Frame == nil || memo.Key != w.sub.ID {
		body := &rtm.SubscriptionPresence{SubscriptionID: w.sub.ID, Event: ev.Kind.String(),
			Members: []rtm.PresenceMember{}, Users: int64(ev.Users), Connections: int64(ev.Connections)}
		if ev.Kind != presence.Count {
			body.Members = []rtm.PresenceMember{{UserID: ev.Member.UserID, Info: ev.Member.Info}}
		}
		frame, err := c.Codec().AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionPresence, Body: body})
		if err != nil {
			w.p.log.Error("presence event not encoded", "appkey", w.p.app.Key, "err", err)
			return
		}
		memo.Key, memo.Frame = w.sub.ID, frame
	}
	c.PushPresence(w.sub, memo.Frame)
}

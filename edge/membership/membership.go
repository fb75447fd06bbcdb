// Package membership keeps a connection's presence (the presence
// extension) in step with its subscriptions: a connection is a member of
// every channel it has a live subscription to, under its user id
// (anonymous without one), and a subscription with presence: true also
// watches the channel, receiving a snapshot of its members and then
// each join and leave as rtm/subscription/presence. The rooms themselves
// are the presence registry's (edge/presence); this package is one
// connection's part in them, and the app's presence_join and
// presence_leave events (edge/hook).
//
// What the registry holds follows the connection's live subscriptions
// (edge/delivery): every change of them, and of the connection's
// identity, ends with Sync, which applies the difference. Lock order:
// the session's grant lock before Presence.mu before the registry's
// shard locks before delivery.Conn.mu (the watchers take it).
package membership

import (
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/presence"
)

// Presence is a connection's identity and what of it the registry
// holds. It is set up with Init before the connection runs; every method
// is safe from any goroutine that holds neither the connection's lock
// nor a registry lock.
type Presence struct {
	conn   *delivery.Conn
	reg    *presence.Registry
	events *hook.Events // the app's; nil: it posts none
	app    *app.App
	budget int // bytes of the connection's queue a snapshot may take (Budget)
	log    *slog.Logger

	mu    sync.Mutex // guards the fields below; serialises Sync
	who   identity
	rooms rooms
}

// identity is the connection's user ("" is anonymous) and info, as its
// token or the app's connect hook says; fromGrant says a JWT grant set
// them, so they end with it.
type identity struct {
	user      string
	info      any
	fromGrant bool
}

// rooms is what of the connection the registry holds: joinedAs is the
// user id its rooms hold it as; joined the rooms (store keys) it is in;
// watching its watches by subscription; closed is set once the
// connection ended: it is in no room.
type rooms struct {
	joinedAs string
	joined   map[string]struct{}
	watching map[*delivery.Subscription]*watch
	closed   bool
}

// Init sets p up for conn, of app a whose events are events (nil:
// none), in registry reg, with a queue of queueBytes.
func (p *Presence) Init(conn *delivery.Conn, reg *presence.Registry, a *app.App, events *hook.Events, queueBytes int, log *slog.Logger) {
	p.conn, p.reg, p.app, p.events, p.budget, p.log = conn, reg, a, events, Budget(queueBytes), log
}

// SetUser gives the connection a user id ("" for anonymous) and info,
// as its token or the app's connect hook says; its rooms see it leave as
// the old user and join as the new.
func (p *Presence) SetUser(user string, info any, fromGrant bool) {
	p.mu.Lock()
	p.who = identity{user: user, info: info, fromGrant: fromGrant}
	p.mu.Unlock()
	p.Sync()
}

// User is the connection's user: what its JWT's sub or its connect hook
// named; "" for anonymous.
func (p *Presence) User() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.who.user
}

// EndGrantUser drops the identity a JWT grant gave once the grant has
// ended: an expired token proves no user any more.
func (p *Presence) EndGrantUser() {
	p.mu.Lock()
	if p.who.fromGrant {
		p.who = identity{}
	}
	p.mu.Unlock()
	p.Sync()
}

// Leave takes the connection out of every room, for good.
func (p *Presence) Leave() {
	p.mu.Lock()
	p.rooms.closed = true
	p.mu.Unlock()
	p.Sync()
}

// Sync makes the registry hold what the live subscriptions and the
// identity say: it leaves the rooms of channels no live subscription is
// on any more, joins the new ones (before watching, so that a watcher's
// snapshot has the watcher in it) and starts and stops the watches. It
// does nothing on a connection whose rooms are as they should be.
func (p *Presence) Sync() {
	p.mu.Lock()
	defer p.mu.Unlock()
	live := p.conn.Live() // copy-on-write: a snapshot
	r := &p.rooms
	if r.closed {
		live = nil
	}
	want := make(map[string]struct{}, len(live))
	for _, sub := range live {
		want[p.room(sub)] = struct{}{}
	}
	if r.joinedAs != p.who.user {
		// In as the new user before out as the old, so that the counts
		// of the leave are those of the room after the change.
		for room := range r.joined {
			p.event(p.reg.Add(room, p.who.user, p.who.info), hook.KindPresenceJoin, room, p.who.user, p.who.info)
			p.event(p.reg.Remove(room, r.joinedAs), hook.KindPresenceLeave, room, r.joinedAs, nil)
		}
		r.joinedAs = p.who.user
	}
	for room := range r.joined {
		if _, ok := want[room]; !ok {
			p.event(p.reg.Remove(room, r.joinedAs), hook.KindPresenceLeave, room, r.joinedAs, nil)
			delete(r.joined, room)
		}
	}
	for room := range want {
		if _, ok := r.joined[room]; !ok {
			if r.joined == nil {
				r.joined = make(map[string]struct{})
			}
			p.event(p.reg.Add(room, r.joinedAs, p.who.info), hook.KindPresenceJoin, room, r.joinedAs, p.who.info)
			r.joined[room] = struct{}{}
		}
	}
	p.syncWatches(live)
}

// room is the registry's room of sub's channel: its store key.
func (p *Presence) room(sub *delivery.Subscription) string { return p.app.StoreKey(sub.Channel) }

// event posts a presence_join or presence_leave event to the app's
// backend when happened (the user came into room or left it on this
// edge) and the app listens for events.
func (p *Presence) event(happened bool, kind, room, user string, info any) {
	if !happened || p.events == nil {
		return
	}
	d := hook.PresenceData{Channel: room[len(p.app.Key)+1:], Connection: p.conn.ID(), User: user}
	if info != nil {
		d.Info, _ = json.Marshal(info) // decoded from JSON: it encodes
	}
	_ = p.events.Post(kind, d) // counted when dropped
}

package session

import (
	"sync"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/delivery"
)

// Reasons of the rtm/subscription/error that ends a subscription whose
// grant has ended.
const (
	reasonGrantExpired  = "the token that allowed this subscription expired; authenticate with a new token and resubscribe"
	reasonGrantNarrowed = "the role this connection authenticated as since may not subscribe to this channel"
)

// grantTimer ends, at a JWT grant's exp, the subscriptions that only the
// grant allowed, even on a connection that sends nothing more. It is a
// timer, not a goroutine, so an idle connection pays no stack for it; the
// connection stops it when it ends.
//
// mu is held while a grant changes and while its end is applied, so a
// refresh and the timer of the grant it replaces never interleave: lock
// order grantTimer.mu before delivery.Conn.mu.
type grantTimer struct {
	mu      sync.Mutex // guards the fields below
	timer   *time.Timer
	gen     uint64 // bumped by every new grant; an older grant's timer does nothing
	stopped bool   // set once by stop
}

// setGrant gives the connection a new role, permissions and grant end
// (zero: none), for the reader goroutine after a successful
// authentication. Live subscriptions the new permissions do not allow
// end, and the grant's end is armed.
func (c *Session) setGrant(role string, perms app.Permissions, end time.Time) {
	c.role, c.perms, c.grantEnd = role, perms, end
	g := &c.grant
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return
	}
	g.gen++
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	c.revoke(perms, reasonGrantNarrowed)
	if end.IsZero() {
		return
	}
	gen := g.gen
	g.timer = time.AfterFunc(time.Until(end), func() { c.endGrant(gen) })
}

// endGrant applies the end of grant gen: the subscriptions the default
// role may not have end. The reader's expireGrant changes the role itself,
// at its next request.
func (c *Session) endGrant(gen uint64) {
	g := &c.grant
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped || gen != g.gen {
		return
	}
	c.revoke(c.app.DefaultPermissions(), reasonGrantExpired)
	c.pres.EndGrantUser()
}

// stopGrant stops the grant's timer for good; a callback already running
// finishes first, one not yet running will do nothing.
func (c *Session) stopGrant() {
	g := &c.grant
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopped = true
	if g.timer != nil {
		g.timer.Stop()
	}
}

// revoke ends every live subscription whose channel perms do not allow
// (see endSubscriptions). c.grant.mu is held.
func (c *Session) revoke(perms app.Permissions, reason string) {
	c.endSubscriptions(func(sub *delivery.Subscription) bool {
		return !perms.CanSubscribe(sub.Channel) || (sub.Prefix() && !perms.CanSubscribePrefix(sub.Channel)) ||
			(sub.Presence && !perms.CanPresence(sub.Channel))
	}, reason)
}

// endSubscriptions ends the live subscriptions for which end says so: the
// writer closes each cursor and sends rtm/subscription/error
// authorization_denied with reason and the position to resume from; the
// connection's presence follows what it still subscribes. It returns how
// many it ended.
func (c *Session) endSubscriptions(end func(*delivery.Subscription) bool, reason string) int {
	n := c.EndWhere(end, reason)
	if n > 0 {
		c.pres.Sync()
		c.Wake()
	}
	return n
}

// expireGrant returns a connection authenticated by a JWT to the default
// role once the token has expired; for the reader goroutine, before each
// request. The grant's timer ends its subscriptions; this ends them too if
// the request came first.
func (c *Session) expireGrant() {
	if c.grantEnd.IsZero() || time.Now().Before(c.grantEnd) {
		return
	}
	c.grantEnd = time.Time{}
	c.role = app.DefaultRole
	c.perms = c.app.DefaultPermissions()
	g := &c.grant
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		c.revoke(c.perms, reasonGrantExpired)
		c.pres.EndGrantUser()
	}
}

// EndChannel ends the connection's live subscriptions to channel (see
// endSubscriptions), each with rtm/subscription/error
// authorization_denied and reason, and returns how many.
func (c *Session) EndChannel(channel, reason string) int {
	return c.endSubscriptions(func(sub *delivery.Subscription) bool { return sub.Channel == channel }, reason)
}

package delivery

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Prefix subscriptions (rtm/subscribe with prefix: true): every channel
// whose name starts with the subscription's channel. The subscription is
// an ordinary one on the channel named (a parent), plus a child per other
// channel that matches, each a cursor of its own, pumped and armed by the
// connection's writer with the parent. Every data PDU of one names its
// channel.
//
// Cost: a publish costs a prefix subscription nothing. The edge learns of
// new channels through the store's OnCreate hook, which looks the new
// channel's name up once per prefix of it (at most 256 map lookups, and
// none while no prefix subscription exists), never by scanning the
// subscriptions. Channels that exist already are listed once, at
// subscribe time. A subscription covers at most Limits.PrefixChannels
// channels: past that it ends with subscription_quota_exceeded.
//
// With a journal the store is the log's replica, into which the feed
// brings every channel of every edge: a channel another edge made is
// created here as the feed applies its first message, and OnCreate
// attaches it the same way. The history of a prefix subscription is the
// replica's (the channels' recent messages), not read from the log; but
// a child that falls further behind than the store reads on from the log
// (resume), as a plain subscription does.
//
// Lock order: prefixIndex.mu, then prefixGroup.mu; neither is held while
// the store or a connection's lock is taken.

// prefixIndex finds the prefix subscriptions of a new channel.
type prefixIndex struct {
	n     atomic.Int64 // live groups: the hook returns at once at 0
	mu    sync.RWMutex
	byKey map[string][]*prefixGroup // by the store key of the prefix; mu
	store *store.Store              // immutable
}

func newPrefixIndex(s *store.Store) *prefixIndex {
	return &prefixIndex{byKey: make(map[string][]*prefixGroup), store: s}
}

// created is the store's OnCreate hook: it attaches the new channel to
// every prefix subscription it falls under.
func (x *prefixIndex) created(key string) {
	if x.n.Load() == 0 {
		return
	}
	app := strings.IndexByte(key, 0)
	if app < 0 {
		return
	}
	var groups []*prefixGroup
	x.mu.RLock()
	for i := app + 2; i <= len(key); i++ { // prefixes of one byte and more
		groups = append(groups, x.byKey[key[:i]]...)
	}
	x.mu.RUnlock()
	for _, g := range groups {
		g.attach(key, store.Start{HistoryCount: 1 << 30}) // a new channel: all of it
	}
}

func (x *prefixIndex) add(g *prefixGroup) {
	x.mu.Lock()
	x.byKey[g.key] = append(x.byKey[g.key], g)
	x.mu.Unlock()
	x.n.Add(1)
}

func (x *prefixIndex) remove(g *prefixGroup) {
	x.mu.Lock()
	gs := x.byKey[g.key]
	for i, o := range gs {
		if o == g {
			gs = append(gs[:i:i], gs[i+1:]...)
			x.n.Add(-1)
			break
		}
	}
	if len(gs) == 0 {
		delete(x.byKey, g.key)
	} else {
		x.byKey[g.key] = gs
	}
	x.mu.Unlock()
}

// prefixGroup is the children of one prefix subscription.
type prefixGroup struct {
	c      *Conn
	parent *Subscription
	key    string // the store key of the prefix: the parent's channel's
	x      *prefixIndex

	mu    sync.Mutex
	names map[string]bool // store keys attached or being attached; mu
	// kids is the children, copy-on-write under mu, loaded by the writer.
	kids atomic.Pointer[[]*Subscription]
	// closed is set by close (under mu); overflow once a channel past
	// Limits.PrefixChannels matched, which the writer ends the subscription on.
	closed, overflow atomic.Bool
	// unwatch ends the log's watch of the prefix (chanlog.Log.Watch); set
	// before the group is shared.
	unwatch func()
	// retry wakes the writer when a child waiting to read the log again
	// is due (wakeBy), at retryAt; mu.
	retry   *time.Timer
	retryAt time.Time
}

// attach opens a child on the channel of key, unless it has one.
func (g *prefixGroup) attach(key string, start store.Start) {
	if key == g.key {
		return // the parent's own channel
	}
	g.mu.Lock()
	switch {
	case g.closed.Load() || g.names[key]:
		g.mu.Unlock()
		return
	case len(g.names) >= g.c.eng.limits.prefixChannels:
		g.mu.Unlock()
		g.overflow.Store(true)
		g.c.Wake() // any goroutine: the hook runs on the creator's
		return
	}
	g.names[key] = true
	g.mu.Unlock()
	// Outside mu: opening a cursor may create the channel again (if it was
	// just forgotten), and so call created, which comes back here.
	cur, err := g.x.store.Subscribe(key, start)
	if err != nil {
		return // the store is closing
	}
	p := g.parent
	kid := &Subscription{ID: p.ID, Channel: key[strings.IndexByte(key, 0)+1:], Cursor: cur,
		Options: Options{FastForward: p.FastForward, Batch: p.Batch}, Since: p.Since,
		prefixLink: prefixLink{of: p, named: true}}
	if p.Changes != nil {
		kid.Changes = &ValueChanges{}
	}
	g.mu.Lock()
	if g.closed.Load() {
		g.mu.Unlock()
		cur.Close()
		return
	}
	old := g.children()
	kids := make([]*Subscription, len(old), len(old)+1)
	copy(kids, old)
	kids = append(kids, kid)
	g.kids.Store(&kids)
	g.mu.Unlock()
	g.c.Wake() // any goroutine: the hook runs on the creator's
}

// children returns the children attached so far.
func (g *prefixGroup) children() []*Subscription {
	if k := g.kids.Load(); k != nil {
		return *k
	}
	return nil
}

// close closes every child and leaves the index; idempotent.
func (g *prefixGroup) close() {
	g.mu.Lock()
	if g.closed.Swap(true) {
		g.mu.Unlock()
		return
	}
	kids := g.children()
	if g.retry != nil {
		g.retry.Stop()
	}
	g.mu.Unlock()
	g.x.remove(g)
	for _, k := range kids {
		k.Cursor.Close()
	}
	if g.unwatch != nil {
		g.unwatch()
	}
}

// StartPrefix makes sub, on the channel of store key key, a prefix
// subscription: it registers its group, so that channels made from now
// on attach, then attaches the channels that exist (with start applied
// to each). Too many is subscription_quota_exceeded, and nothing stays
// registered. For the reader, before the hand-over.
func (c *Conn) StartPrefix(sub *Subscription, key string, start store.Start) error {
	g := &prefixGroup{c: c, parent: sub, key: key, x: c.eng.prefixes, names: make(map[string]bool)}
	limit := c.eng.limits.prefixChannels
	// The log brings the channels under the prefix into the store (an
	// edge fed by interest holds only those its clients use), those it
	// holds now among them, which then attach through the store's
	// OnCreate as they are made here.
	unwatch, more, err := c.eng.chlog.Watch(c.ctx, key, limit)
	switch {
	case err != nil:
		return rtm.Errorf(rtm.CodeUnavailable, "cannot list the channels that start with %q: %v", sub.Channel, err)
	case more:
		return rtm.Errorf(rtm.CodeSubscriptionQuotaExceeded, "more than %d channels start with %q; subscribe to a longer prefix",
			limit, sub.Channel)
	}
	g.unwatch = unwatch
	sub.group, sub.named = g, true
	c.eng.prefixes.add(g)
	names, more := c.eng.store.ChannelNames(key, "", limit)
	if more {
		g.close()
		return rtm.Errorf(rtm.CodeSubscriptionQuotaExceeded, "more than %d channels start with %q; subscribe to a longer prefix",
			limit, sub.Channel)
	}
	start.Position = nil
	for _, n := range names {
		g.attach(n, start)
	}
	return nil
}

// pumpGroup sends one batch of each child of a prefix subscription, or
// ends it if it covers too many channels.
func (c *Conn) pumpGroup(w *writer, sub *Subscription) error {
	g := sub.group
	if g.overflow.Load() && !g.closed.Load() {
		c.endSub(sub)
		return c.writePDU(w, &rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: &rtm.SubscriptionError{
			Error:    string(rtm.CodeSubscriptionQuotaExceeded),
			Reason:   "more than " + strconv.Itoa(c.eng.limits.prefixChannels) + " channels start with " + sub.Channel + "; subscribe to a longer prefix",
			Position: sub.Cursor.Position().String(), SubscriptionID: sub.ID,
		}})
	}
	for _, kid := range g.children() {
		if g.closed.Load() {
			return nil // ended meanwhile (out of sync, say)
		}
		if err := c.pumpOwn(w, kid); err != nil {
			return err
		}
	}
	return nil
}

// armGroup arms every child's cursor, and the group's timer for those
// waiting to read the log again; false if one has data ready, or a
// catch-up from the log to read on.
func (c *Conn) armGroup(sub *Subscription) bool {
	for _, kid := range sub.group.children() {
		if !c.armOwn(kid) {
			return false
		}
	}
	return true
}

// wakeBy has the group's timer wake the writer at at, or before.
func (g *prefixGroup) wakeBy(at time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed.Load():
		return
	case g.retry == nil:
		g.retry = time.AfterFunc(time.Until(at), g.due)
	case !g.retryAt.IsZero() && !g.retryAt.After(at):
		return // due sooner already
	default:
		g.retry.Reset(time.Until(at))
	}
	g.retryAt = at
}

// due is the group's timer: a child may read the log again.
func (g *prefixGroup) due() {
	g.mu.Lock()
	g.retryAt = time.Time{}
	g.mu.Unlock()
	g.c.Wake()
}

// writePDU encodes p in the writer's PDU buffer and writes it.
func (c *Conn) writePDU(w *writer, p *rtm.PDU) error {
	var err error
	if w.pdu, err = c.codec.AppendPDU(w.pdu[:0], p); err != nil {
		return c.Internal(err)
	}
	return c.write(w, w.pdu)
}

// appendNamedData lays out the data PDU of a prefix subscription, which
// names its channel, from w.msgs, without allocating once the writer's
// buffers have grown: the messages go in as pointers to raw values.
func (c *Conn) appendNamedData(w *writer, sub *Subscription, next rtm.Position) error {
	w.raws = w.raws[:0]
	for _, m := range w.msgs {
		w.raws = append(w.raws, rtm.RawValue(m))
	}
	w.vals = w.vals[:0]
	for i := range w.raws {
		w.vals = append(w.vals, &w.raws[i])
	}
	w.named = rtm.SubscriptionData{SubscriptionID: sub.ID, Channel: sub.Channel, Position: next.String(), Messages: w.vals}
	w.namedPDU = rtm.PDU{Action: rtm.ActionSubscriptionData, Body: &w.named}
	var err error
	w.pdu, err = c.codec.AppendPDU(w.pdu[:0], &w.namedPDU)
	clear(w.raws)
	clear(w.vals)
	w.named, w.namedPDU = rtm.SubscriptionData{}, rtm.PDU{}
	if err != nil {
		return c.Internal(err)
	}
	return nil
}

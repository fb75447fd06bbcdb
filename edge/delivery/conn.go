package delivery

import (
	"context"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// Conn is one connection as the delivery engine sees it: its socket,
// its outbox and its live subscriptions. The session that owns it
// (Owner) hands subscriptions over and queues replies; the writer,
// whoever holds it (outbox.go), owns the cursors once a subscription is
// handed over; mu guards what they share. A Conn is embedded in its
// session and set up with Init before the connection runs.
type Conn struct {
	eng    *Engine
	socket // set by Init, then read-only
	peer   // set by Init, then read-only
	owner  Owner

	// ctx ends when the connection is to close; the writer then sends the
	// close frame with status.
	ctx    context.Context
	cancel context.CancelFunc

	// mu guards the fields below, and out's queue: a subscription
	// becomes live as its reply is queued (outbox.go).
	mu  sync.Mutex
	out outbox // the writer's queue and state (outbox.go)
	// live holds the live subscriptions (at most the per-connection
	// limit, ids unique) in the order they started: what the writer
	// walks. It is copy-on-write: a change makes a new slice and never
	// touches the old one, so the writer walks its snapshot unlocked.
	live   []*Subscription
	status closeStatus // set once, by the first CloseWith
}

// socket is the connection's WebSocket and the codec it speaks.
type socket struct {
	ws         *websocket.Conn
	codec      codec.Codec
	codecIndex int // of the connection's codec (edge/payload)
	// denc writes deltas in the codec; nil for one without the delta
	// extension (CBOR), whose delta subscriptions get whole messages.
	denc codec.DeltaEncoder
	op   websocket.Opcode
	// deflate is the threshold from which ws compresses a message
	// (permessage-deflate), -1 when it does not: connections with the
	// same value frame a PDU as the same bytes (shared.go).
	deflate int
}

// peer is who is at the other end: the connection's id (the origin its
// own publishes carry, which its subscriptions skip), its address for
// logs, and its app's counters.
type peer struct {
	id      string
	remote  string
	traffic *tally.App
}

// closeStatus is the close code and reason the writer sends.
type closeStatus struct {
	code   websocket.StatusCode
	reason string
}

// Owner is the session that owns a connection: what its delivery tells
// it. Both are called from any goroutine, holding none of the
// connection's locks.
type Owner interface {
	// Unblock wakes the owner's reader if it waits for the outbox to have
	// room or for the connection to close: the writer took a full queue,
	// or the connection is closing.
	Unblock()
	// Ended says the writer ended a live subscription of its own accord
	// (out of sync, a catch-up that failed, a view past its budget, a
	// prefix past its limit): what follows the live subscriptions
	// (presence) follows.
	Ended()
}

// Init sets c up, for the connection ws of app traffic and id, to
// remote, owned by owner (nil: nobody to tell). It comes before the
// connection runs.
func (c *Conn) Init(e *Engine, ws *websocket.Conn, id, remote string, traffic *tally.App, owner Owner) {
	cd, ci := payload.CodecFor(ws.Subprotocol())
	c.eng = e
	c.socket = socket{ws: ws, codec: cd, codecIndex: ci, op: websocket.OpText}
	c.denc, _ = cd.(codec.DeltaEncoder)
	if cd.Binary() {
		c.op = websocket.OpBinary
	}
	c.deflate = -1
	if th, ok := ws.Deflate(); ok {
		c.deflate = th
	}
	c.peer = peer{id: id, remote: remote, traffic: traffic}
	if owner == nil {
		owner = noOwner{}
	}
	c.owner = owner
	c.out = outbox{limit: e.limits.queueBytes, writer: newWriterState()}
	if ws.CanTryWrite() {
		c.out.fan = e.fan.worker()
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
}

// noOwner is the Owner of a connection nobody owns (the benchmarks').
type noOwner struct{}

func (noOwner) Unblock() {}
func (noOwner) Ended()   {}

// ID is the connection's id.
func (c *Conn) ID() string { return c.id }

// Remote is the connection's remote address.
func (c *Conn) Remote() string { return c.remote }

// WS is the connection's WebSocket, for its reader.
func (c *Conn) WS() *websocket.Conn { return c.ws }

// Codec is the codec the connection speaks.
func (c *Conn) Codec() codec.Codec { return c.codec }

// CodecIndex is the index of the connection's codec (edge/payload).
func (c *Conn) CodecIndex() int { return c.codecIndex }

// Op is the opcode of the connection's frames: text for JSON, binary
// for the others.
func (c *Conn) Op() websocket.Opcode { return c.op }

// Traffic is the counters of the connection's app.
func (c *Conn) Traffic() *tally.App { return c.traffic }

// Context ends when the connection is to close.
func (c *Conn) Context() context.Context { return c.ctx }

// CloseWith asks the writer to close the connection with code and
// reason; the first call decides them. It does not block.
func (c *Conn) CloseWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.status.code == 0 {
		c.status = closeStatus{code: code, reason: reason}
	}
	c.mu.Unlock()
	c.out.closed.Store(true)
	c.cancel()
	c.owner.Unblock()
	c.Wake() // the writer sends the close frame
}

// Abort drops the connection at once, without a close handshake.
func (c *Conn) Abort() {
	c.out.closed.Store(true)
	c.cancel()
	c.owner.Unblock()
	c.ws.CloseNow()
	c.Wake()
}

// CloseStatus returns the code and reason the connection is closed with
// (0 and "" while it is not closing).
func (c *Conn) CloseStatus() (websocket.StatusCode, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status.code, c.status.reason
}

// End ends the connection once its reader is done: it waits for the
// writer to stop for good (it sends the close frame), drops the socket,
// and closes every subscription left.
func (c *Conn) End() {
	<-c.out.writer.stopped()
	c.ws.CloseNow()
	c.mu.Lock()
	for _, sub := range c.live {
		sub.Close()
		c.eng.counters.Subscriptions.Add(-1)
	}
	c.live = nil
	c.out.discardLocked()
	c.mu.Unlock()
}

// Lookup reports whether a subscription with id is live, and how many
// are.
func (c *Conn) Lookup(id string) (live bool, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.subLocked(id) != nil, len(c.live)
}

// Live returns the live subscriptions: a snapshot, never changed.
func (c *Conn) Live() []*Subscription {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// HandOver makes sub live and queues reply (nil: none), then notice
// (nil: none) before any of its data; with force, a live subscription
// of the same id ends first. The frames go past the queue's byte check,
// in the same step as the hand-over (outbox.pushUncheckedLocked says
// why). For the owner's reader, which wakes the writer once the request
// is handled.
func (c *Conn) HandOver(sub *Subscription, reply, notice []byte, force bool) {
	c.mu.Lock()
	if old := c.subLocked(sub.ID); old != nil && force {
		c.out.pushUncheckedLocked(item{end: old})
	} else {
		c.eng.counters.Subscriptions.Add(1)
	}
	c.setSubLocked(sub)
	if reply != nil {
		c.out.pushUncheckedLocked(item{frame: reply})
	}
	if notice != nil {
		c.out.pushUncheckedLocked(item{frame: notice})
	}
	c.mu.Unlock()
	c.MarkWakeDue()
}

// Unsubscribe ends the live subscription id, if any, and reports
// whether there was one: the writer closes its cursor and, unless reply
// is zero, replies with the position it would have read next.
func (c *Conn) Unsubscribe(id string, reply rtm.ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	sub := c.subLocked(id)
	if sub == nil {
		return false
	}
	c.dropSubLocked(sub)
	c.eng.counters.Subscriptions.Add(-1)
	c.out.pushUncheckedLocked(item{end: sub, id: reply, reply: !reply.IsZero()})
	return true
}

// EndWhere ends the live subscriptions for which end says so: the writer
// closes each cursor and sends rtm/subscription/error
// authorization_denied with reason and the position to resume from. It
// returns how many it ended; the caller wakes the writer.
func (c *Conn) EndWhere(end func(*Subscription) bool, reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, sub := range c.live {
		if !end(sub) {
			continue
		}
		c.dropSubLocked(sub)
		c.eng.counters.Subscriptions.Add(-1)
		c.out.pushUncheckedLocked(item{end: sub, deny: reason})
		n++
	}
	return n
}

// subLocked returns the live subscription with id, nil if none; c.mu is
// held.
func (c *Conn) subLocked(id string) *Subscription {
	for _, s := range c.live {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// setSubLocked makes sub the live subscription of its id, replacing any;
// c.mu is held. It makes a new c.live (copy-on-write).
func (c *Conn) setSubLocked(sub *Subscription) {
	live := make([]*Subscription, 0, len(c.live)+1)
	for _, s := range c.live {
		if s.ID != sub.ID {
			live = append(live, s)
		}
	}
	c.live = append(live, sub)
}

// dropSubLocked ends the live subscription sub and reports whether it was
// live; c.mu is held. It makes a new c.live (copy-on-write).
func (c *Conn) dropSubLocked(sub *Subscription) bool {
	i := slices.Index(c.live, sub)
	if i < 0 {
		return false
	}
	live := make([]*Subscription, 0, len(c.live)-1)
	live = append(live, c.live[:i]...)
	c.live = append(live, c.live[i+1:]...)
	return true
}

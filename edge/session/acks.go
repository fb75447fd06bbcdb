package session

import (
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// MaxInFlight bounds a connection's publishes waiting for the channel
// log; past it the reader waits, and TCP pushes back on the client.
const MaxInFlight = 256

// acks keeps, in request order, a connection's publishes that wait for
// the journal, so that replies still leave in the order requests came: a
// publish's reply is queued once it and every publish before it are
// answered, and the reader waits for all of them before it serves any
// other request.
//
// The replies are queued past the outbox's bound (they must not be
// refused: their messages are stored), so the reader bounds them instead:
// it takes no new publish while the outbox is full, until the writer
// takes the queue (its takeWork wakes it: Unblock). A client that does not read its
// replies is pushed back on by TCP, as on an edge alone, whose reader
// writes its replies itself; its queue holds at most Limits.QueueBytes
// plus the replies of MaxInFlight publishes.
type acks struct {
	n    atomic.Int32 // len(q), for the reader's check without the lock
	mu   sync.Mutex   // guards q and roomWaits; taken before delivery.Conn.mu
	cond sync.Cond    // on mu: q shrank, the outbox's queue was taken, or the connection is closing
	q    []*ackSlot
	// roomWaits counts the times the reader waited for the writer to
	// take a full outbox (pushAck); tests read it.
	roomWaits int
}

// ackSlot is one publish waiting for the journal.
type ackSlot struct {
	frame []byte // the reply, once answered; nil for a request without id
	done  bool
}

// pushAck adds a slot for a publish, waiting while the connection has
// MaxInFlight already or its outbox is full. It returns nil if the
// connection is closing. For the reader goroutine.
func (c *Session) pushAck() *ackSlot {
	a := &c.acks
	a.mu.Lock()
	defer a.mu.Unlock()
	for c.Context().Err() == nil {
		if len(a.q) < MaxInFlight && !c.Full() {
			break
		}
		if c.WakeDue() {
			// Replies the reader queued itself wait for it to wake the
			// writer, which must run for the outbox to empty. Not under
			// a.mu: the reader may make the writer's pass itself.
			a.mu.Unlock()
			c.WakeIfDue()
			a.mu.Lock()
			continue
		}
		if len(a.q) < MaxInFlight {
			a.roomWaits++
		}
		a.cond.Wait()
	}
	if c.Context().Err() != nil {
		return nil
	}
	s := &ackSlot{}
	a.q = append(a.q, s)
	a.n.Store(int32(len(a.q)))
	return s
}

// completeAck records the reply of slot s and queues, in order, the
// replies of the answered slots at the front. Any goroutine may call it.
func (c *Session) completeAck(s *ackSlot, frame []byte) {
	a := &c.acks
	a.mu.Lock()
	s.frame, s.done = frame, true
	k := 0
	for k < len(a.q) && a.q[k].done {
		k++
	}
	if k == 0 {
		a.mu.Unlock()
		return
	}
	// Queued under a.mu, so two completions cannot swap their replies.
	for _, d := range a.q[:k] {
		if d.frame != nil {
			c.PushReply(d.frame)
		}
	}
	a.q = append(a.q[:0], a.q[k:]...)
	a.n.Store(int32(len(a.q)))
	a.cond.Broadcast()
	a.mu.Unlock()
	c.Wake()
}

// drainAcks waits until every publish read so far has its reply queued
// (or the connection is closing). For the reader goroutine, before it
// queues any other reply.
func (c *Session) drainAcks() {
	a := &c.acks
	if a.n.Load() == 0 {
		return
	}
	a.mu.Lock()
	for len(a.q) > 0 && c.Context().Err() == nil {
		a.cond.Wait()
	}
	a.mu.Unlock()
}

// wakeAcks wakes a reader waiting in pushAck or drainAcks, for a closing
// connection or an outbox whose queue the writer took.
func (c *Session) wakeAcks() {
	a := &c.acks
	a.mu.Lock()
	a.cond.Broadcast()
	a.mu.Unlock()
}

// awaitAppend queues the reply of a publish the channel log answers
// later (p) once it does, after the replies of every publish before it.
// The publish is sent already: a reader that waits here for room holds
// at most MaxInFlight+1 in flight.
func (c *Session) awaitAppend(action string, id rtm.ID, p *chanlog.Pending) {
	slot := c.pushAck()
	if slot == nil {
		return // closing: no reply will leave
	}
	cd, e := c.Codec(), c.edge
	p.Then(func(pos rtm.Position, err error) {
		c.completeAck(slot, e.ackFrame(cd, action, id, pos, err))
		if err == nil {
			e.Counters.MessagesIn[c.CodecIndex()].Add(1)
			c.Traffic().MessagesIn.Add(1)
		}
	})
}

// ackFrame encodes the reply to a publish the log answered later; nil
// without an id.
func (e *Edge) ackFrame(cd codec.Codec, action string, id rtm.ID, pos rtm.Position, err error) []byte {
	var re *rtm.Error
	if err != nil {
		// The store's refusals map as for an edge alone; anything else is
		// the log not confirming in time.
		re = e.LogRefusal(err, "publish")
		e.Counters.Refuse(re.Code)
	}
	if id.IsZero() {
		return nil
	}
	pdu := &rtm.PDU{ID: id}
	if re != nil {
		pdu.Action, pdu.Body = rtm.Reply(action, rtm.OutcomeError), re.Body()
	} else {
		pdu.Action = rtm.Reply(action, rtm.OutcomeOK)
		pdu.Body = &rtm.PositionBody{Position: pos.String()}
	}
	frame, encErr := cd.AppendPDU(make([]byte, 0, replyRoom), pdu)
	if encErr != nil {
		e.Logger.Error("encoding a publish reply", "err", encErr)
		return nil
	}
	return frame
}

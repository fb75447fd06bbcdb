package client

import (
	"github.com/sluicehq/sluice/shared/rtm"
)

// eventKind says what an event carries to the delivery goroutine.
type eventKind uint8

const (
	evData     eventKind = iota // messages for a subscription's handler
	evInfo                      // a fast_forward notice for OnInfo, and its Gap for OnGap
	evError                     // a subscription ended by the edge, for OnError
	evState                     // a new State for Options.OnState
	evPresence                  // members who joined or left, for OnMembers, OnJoin and OnLeave
)

// event is one unit of work for the delivery goroutine.
type event struct {
	kind     eventKind
	sub      *Subscription
	messages []any                // evData
	pos      rtm.Position         // evData: after the batch; evInfo: the new read point
	size     int                  // evData: encoded bytes, counted against the buffer
	info     rtm.SubscriptionInfo // evInfo
	gap      *Gap                 // evInfo (a pointer: keeps the frequent evData events small)
	err      error                // evError
	channel  string               // evData of a prefix subscription: the messages' channel
	state    State                // evState
	presence *presenceChange      // evPresence
}

// queue is the FIFO between the reader goroutine and the delivery
// goroutine. Every field is guarded by Client.mu.
type queue struct {
	events  []event
	bytes   int  // encoded bytes of the queued evData events
	limit   int  // Options.DeliveryBufferBytes
	running bool // the delivery goroutine is inside a callback
	stop    bool // Close: deliver what is left (state events), then exit
	// low is closed when bytes falls to limit/2 or below, for a
	// supervisor waiting to resubscribe lagging subscriptions; nil when
	// nobody waits.
	low  chan struct{}
	wake chan struct{} // capacity 1: something was queued or stop was set
	done chan struct{} // closed when the delivery goroutine exits
}

// closedChan is an already closed channel, for waits that are already over.
var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// enqueueLocked queues an event and wakes the delivery goroutine.
func (c *Client) enqueueLocked(ev event) {
	c.q.events = append(c.q.events, ev)
	c.q.bytes += ev.size
	select {
	case c.q.wake <- struct{}{}:
	default:
	}
}

// overflowsLocked reports whether size more bytes would overflow the
// buffer. A batch larger than the whole buffer still fits an empty one, so
// a subscription always makes progress.
func (c *Client) overflowsLocked(size int) bool {
	return c.q.bytes > 0 && c.q.bytes+size > c.q.limit
}

// drainedLocked returns a channel closed once the buffer is at most half
// full.
func (c *Client) drainedLocked() <-chan struct{} {
	if c.q.bytes <= c.q.limit/2 {
		return closedChan
	}
	if c.q.low == nil {
		c.q.low = make(chan struct{})
	}
	return c.q.low
}

// deliver runs every callback of the client, one at a time and in the
// order events were queued, until Close.
func (c *Client) deliver() {
	defer close(c.q.done)
	for {
		ev, ok := c.nextEvent()
		if !ok {
			return
		}
		c.dispatch(ev)
		c.mu.Lock()
		c.q.running = false
		c.mu.Unlock()
	}
}

// nextEvent waits for the next event; false once stopped and empty.
func (c *Client) nextEvent() (event, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.q.events) == 0 {
		if c.q.stop {
			return event{}, false
		}
		c.mu.Unlock()
		<-c.q.wake
		c.mu.Lock()
	}
	ev := c.q.events[0]
	c.q.events[0] = event{} // let the messages be collected once handled
	c.q.events = c.q.events[1:]
	c.q.bytes -= ev.size
	if c.q.low != nil && c.q.bytes <= c.q.limit/2 {
		close(c.q.low)
		c.q.low = nil
	}
	c.q.running = true
	return ev, true
}

// dispatch runs the callbacks of one event; no lock is held.
func (c *Client) dispatch(ev event) {
	s := ev.sub
	switch ev.kind {
	case evData:
		c.handData(s, ev.messages, ev.pos, ev.channel)
	case evInfo:
		c.handInfo(s, &ev.info, ev.gap, ev.pos)
	case evError:
		if s.ended.Load() {
			return
		}
		if s.opts.OnError != nil {
			s.opts.OnError(ev.err)
		}
		c.mu.Lock()
		c.endLocked(s, ev.err)
		c.mu.Unlock()
	case evState:
		c.opts.OnState(ev.state)
	case evPresence:
		c.handPresence(s, ev.presence)
	}
}

// handData runs a subscription's handler on a batch of messages.
func (c *Client) handData(s *Subscription, messages []any, pos rtm.Position, channel string) {
	for i, v := range messages {
		if s.ended.Load() {
			return
		}
		s.handler(Message{SubscriptionID: s.id, Channel: channel, Value: v, Position: pos, EndOfBatch: i == len(messages)-1})
	}
	if s.opts.Prefix {
		return // positions are per channel: there is no one to resume from
	}
	c.advance(s, pos)
}

// handInfo runs a subscription's OnInfo, then its OnGap.
func (c *Client) handInfo(s *Subscription, info *rtm.SubscriptionInfo, gap *Gap, pos rtm.Position) {
	if s.ended.Load() {
		return
	}
	if s.opts.OnInfo != nil {
		s.opts.OnInfo(*info)
	}
	if s.opts.OnGap != nil && !s.ended.Load() {
		s.opts.OnGap(*gap)
	}
	c.advance(s, pos)
}

// advance records that everything before pos was handed to the handler.
func (c *Client) advance(s *Subscription, pos rtm.Position) {
	c.mu.Lock()
	if !s.ended.Load() {
		s.delivered = pos
	}
	c.mu.Unlock()
}

// dropPendingLocked empties the queue at Close, keeping state events (the
// application still hears Closed). Subscriptions whose end was queued end
// now, with their error but without OnError.
func (c *Client) dropPendingLocked() {
	kept := c.q.events[:0]
	for _, ev := range c.q.events {
		switch ev.kind {
		case evState:
			kept = append(kept, ev)
		case evError:
			c.endLocked(ev.sub, ev.err)
		}
	}
	clear(c.q.events[len(kept):])
	c.q.events = kept
	c.q.bytes = 0
}

package loadgen

import (
	"context"
	"errors"
	"sync"
	"time"
)

// action is what the fake broker does with one message for one
// subscriber.
type action uint8

const (
	deliverIt action = iota
	dropIt
	dupIt
	holdIt // deliver after the publisher's next message: a reordering
)

// broker is an in-memory pub/sub server behind a Driver, with faults
// injected per subscriber and sequence number, to check what the
// generator counts.
type broker struct {
	fault  func(sub int, st Stamp) action // nil: deliver everything
	refuse func(st Stamp) bool            // nil: store everything
	// async makes the connections AsyncPublishers, acknowledging on a
	// goroutine of their own as a client's reader does.
	async bool
	// silent, with async, stores a message but never acknowledges it.
	silent func(st Stamp) bool
	// unsent, with async, fails a publish at once, as a client does
	// while it reconnects: nothing is sent, stored or acknowledged.
	unsent func(st Stamp) bool
	// pause, when set, holds each subscriber's delivery goroutine before
	// a message for as long as it returns, as a loaded machine may.
	pause func(st Stamp) time.Duration

	mu    sync.Mutex
	subs  map[string][]*fakeConn // by channel
	conns int                    // subscribers so far, to number them

	quiet quiet
}

func newBroker() *broker { return &broker{subs: map[string][]*fakeConn{}} }

// giveUpClock makes the run give up waiting (a stall, the drain) only
// when the broker has nothing left to deliver or acknowledge: what it
// dropped is then truly lost, however slowly the machine runs.
func (b *broker) giveUpClock() giveUpClock { return &b.quiet }

func (b *broker) Name() string { return "fake" }

func (b *broker) Dial(context.Context, func(error)) (Conn, error) { return b.dialNode(0), nil }

// dialNode opens a connection that says it reached node (see nodeBroker).
func (b *broker) dialNode(node int) Conn {
	c := &fakeConn{b: b, node: node, wake: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
	go c.loop()
	if b.async {
		a := &asyncFakeConn{fakeConn: c, acks: make(chan func(), 1024), acked: make(chan struct{})}
		go a.ackLoop()
		return a
	}
	return c
}

// asyncFakeConn is a fakeConn that also publishes asynchronously.
type asyncFakeConn struct {
	*fakeConn
	acks  chan func() // outcomes to report, in order
	acked chan struct{}
}

func (a *asyncFakeConn) PublishAsync(channel, payload string, done func(error)) error {
	if st, perr := ParseStamp(payload); perr == nil && a.b.unsent != nil && a.b.unsent(st) {
		return errFakeUnsent
	}
	silent := false
	if st, perr := ParseStamp(payload); perr == nil && a.b.silent != nil {
		silent = a.b.silent(st)
	}
	if !silent {
		a.b.quiet.add(1) // the acknowledgment, before the deliveries it follows
	}
	err := a.PublishNoAck(channel, payload)
	if !silent {
		a.acks <- func() { done(err) }
	}
	return nil
}

func (a *asyncFakeConn) ackLoop() {
	defer close(a.acked)
	for f := range a.acks {
		f()
		a.b.quiet.add(-1)
	}
}

func (a *asyncFakeConn) Close() error {
	err := a.fakeConn.Close()
	close(a.acks)
	<-a.acked
	return err
}

// fakeConn delivers on its own goroutine, in order, as a client would.
type fakeConn struct {
	b        *broker
	node     int // the node dialed
	idx      int
	on       func(string)
	wake     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex // guards queue, held and heldFrom
	queue    []string
	held     string
	heldFrom uint16 // the publisher (lane) of held
}

func (c *fakeConn) Subscribe(_ context.Context, channel string, on func(string)) error {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	c.idx, c.on = c.b.conns, on
	c.b.conns++
	c.b.subs[channel] = append(c.b.subs[channel], c)
	return nil
}

func (c *fakeConn) Publish(_ context.Context, channel, payload string) error {
	return c.PublishNoAck(channel, payload)
}

var (
	errFakeRefused = errors.New("fake: refused")
	errFakeUnsent  = errors.New("fake: disconnected, not sent")
)

func (c *fakeConn) PublishNoAck(channel, payload string) error {
	st, err := ParseStamp(payload)
	if err != nil {
		return err
	}
	if c.b.refuse != nil && c.b.refuse(st) {
		return errors.Join(ErrRefused, errFakeRefused)
	}
	c.b.mu.Lock()
	subs := c.b.subs[channel]
	c.b.mu.Unlock()
	for _, s := range subs {
		a := deliverIt
		if c.b.fault != nil {
			a = c.b.fault(s.idx, st)
		}
		s.push(payload, st.Publisher, a)
	}
	return nil
}

// push queues a message of publisher from for the subscriber, applying
// the fault. A held message goes out behind its publisher's next one:
// reordering is counted per publisher, and a message of another
// publisher in between would not reorder anything.
func (c *fakeConn) push(p string, from uint16, a action) {
	c.mu.Lock()
	n := len(c.queue)
	switch a {
	case deliverIt:
		c.queue = append(c.queue, p)
	case dupIt:
		c.queue = append(c.queue, p, p)
	case holdIt:
		// Not on its way until its publisher's next message.
		c.held, c.heldFrom = p, from
		c.mu.Unlock()
		return
	case dropIt:
		c.mu.Unlock()
		return
	}
	if c.held != "" && c.heldFrom == from {
		c.queue = append(c.queue, c.held)
		c.held = ""
	}
	c.b.quiet.add(len(c.queue) - n) // under c.mu: counted before loop takes them
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *fakeConn) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		c.mu.Lock()
		q := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, p := range q {
			c.pause(p)
			c.on(p)
		}
		c.b.quiet.add(-len(q))
	}
}

// quiet counts what the broker still has to deliver or acknowledge, and
// is the give-up clock of runs against it: its timers fire (whatever their
// duration) once that count is zero.
type quiet struct {
	mu    sync.Mutex // guards pending and armed
	pend  int
	armed map[*quietTimer]bool
}

// add changes the count; at zero it fires the armed timers.
func (q *quiet) add(n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pend += n
	if q.pend != 0 {
		return
	}
	for t := range q.armed {
		t.fire()
		delete(q.armed, t)
	}
}

func (q *quiet) newTimer(time.Duration) giveUpTimer {
	t := &quietTimer{q: q, c: make(chan time.Time, 1)}
	t.Reset(0)
	return t
}

// quietTimer is a timer of quiet.
type quietTimer struct {
	q *quiet
	c chan time.Time // capacity 1
}

func (t *quietTimer) C() <-chan time.Time { return t.c }

func (t *quietTimer) Reset(time.Duration) {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	t.clear()
	if t.q.pend == 0 {
		t.fire()
		return
	}
	if t.q.armed == nil {
		t.q.armed = map[*quietTimer]bool{}
	}
	t.q.armed[t] = true
}

func (t *quietTimer) Stop() {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	delete(t.q.armed, t)
	t.clear()
}

// fire and clear run under q.mu.
func (t *quietTimer) fire() {
	select {
	case t.c <- time.Time{}:
	default:
	}
}

func (t *quietTimer) clear() {
	select {
	case <-t.c:
	default:
	}
}

// pause holds the delivery goroutine before p if the broker says so.
func (c *fakeConn) pause(p string) {
	if c.b.pause == nil {
		return
	}
	if st, err := ParseStamp(p); err == nil {
		if d := c.b.pause(st); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-c.stop:
			}
		}
	}
}

func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return nil
}

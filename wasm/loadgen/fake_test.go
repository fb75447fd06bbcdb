package loadgen

import (
	"context"
	"errors"
	"sync"
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

	mu    sync.Mutex
	subs  map[string][]*fakeConn // by channel
	conns int                    // subscribers so far, to number them
}

func newBroker() *broker { return &broker{subs: map[string][]*fakeConn{}} }

func (b *broker) Name() string { return "fake" }

func (b *broker) Dial(context.Context, func(error)) (Conn, error) {
	c := &fakeConn{b: b, wake: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
	go c.loop()
	if b.async {
		a := &asyncFakeConn{fakeConn: c, acks: make(chan func(), 1024), acked: make(chan struct{})}
		go a.ackLoop()
		return a, nil
	}
	return c, nil
}

// asyncFakeConn is a fakeConn that also publishes asynchronously.
type asyncFakeConn struct {
	*fakeConn
	acks  chan func() // outcomes to report, in order
	acked chan struct{}
}

func (a *asyncFakeConn) PublishAsync(channel, payload string, done func(error)) error {
	err := a.PublishNoAck(channel, payload)
	if st, perr := ParseStamp(payload); perr == nil && a.b.silent != nil && a.b.silent(st) {
		return nil
	}
	a.acks <- func() { done(err) }
	return nil
}

func (a *asyncFakeConn) ackLoop() {
	defer close(a.acked)
	for f := range a.acks {
		f()
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

var errFakeRefused = errors.New("fake: refused")

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
	switch a {
	case deliverIt:
		c.queue = append(c.queue, p)
	case dupIt:
		c.queue = append(c.queue, p, p)
	case holdIt:
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
			c.on(p)
		}
	}
}

func (c *fakeConn) Close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return nil
}

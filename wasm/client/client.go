package client

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/websocket"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// Client is a connection to a Sluice edge (or any RTM v2 endpoint) that
// survives network failures: it reconnects, re-authenticates and resumes
// its subscriptions by position. It is safe for concurrent use.
type Client struct {
	url   string // the WebSocket URL, with /v2 and the appkey
	opts  Options
	codec codec.Codec // the codec asked for; a connection may fall back to JSON
	log   *Logger
	dial  dialFunc

	ctx    context.Context // ends at Close; bounds every goroutine and wait
	cancel context.CancelFunc
	wg     sync.WaitGroup // the supervisor goroutine
	state  atomic.Int32   // the current State; stored under mu, loaded freely

	// mu guards the fields below, the queue, and the mutable fields of
	// every Subscription. It is held only for short bookkeeping, never
	// across I/O or callbacks; a connection's locks are never held while
	// taking it, so the lock order is Client.mu -> conn.box.mu -> conn.mu.
	mu      sync.Mutex
	closed  bool
	cur     *conn         // the live connection, nil while disconnected; read through liveLocked
	ready   chan struct{} // closed while cur != nil
	subs    map[string]*Subscription
	orphans []orphan      // edge subscriptions no one wants any more
	work    chan struct{} // capacity 1: lag or orphans for the supervisor
	susp    suspension    // Suspend and Resume (suspend.go)
	q       queue
}

// orphan is a subscription the edge made for a Subscribe that gave up (or a
// Subscription unsubscribed meanwhile); the supervisor unsubscribes it.
type orphan struct {
	cn *conn
	id string
}

// Dial connects to an edge and authenticates, then keeps the connection up
// until Close. url is the endpoint, like "ws://127.0.0.1:8080" or
// "wss://edge.example.com"; "/v2" is appended unless its path already ends
// in "/vN", and the appkey is added as a query parameter.
//
// A refusal by the edge is an *rtm.Error (use rtm.AsError): an unknown
// appkey is invalid_appkey, a wrong role secret or token
// authentication_failed. Dial does not retry: once it has returned a
// Client, connection losses are handled by the client.
func Dial(ctx context.Context, url string, opts *Options) (*Client, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	u, err := endpointURL(url, o.AppKey)
	if err != nil {
		return nil, err
	}
	cd, err := codecByName(o.Codec)
	if err != nil {
		return nil, err
	}
	c := newClient(u, o, cd, dialWebSocket)
	if err := c.start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// newClient builds a client and starts its delivery goroutine.
func newClient(url string, o Options, cd codec.Codec, dial dialFunc) *Client {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{
		url: url, opts: o, codec: cd, log: o.Logger, dial: dial,
		ctx: ctx, cancel: cancel,
		ready: make(chan struct{}),
		subs:  make(map[string]*Subscription),
		work:  make(chan struct{}, 1),
		q: queue{
			limit: o.DeliveryBufferBytes,
			wake:  make(chan struct{}, 1),
			done:  make(chan struct{}),
		},
	}
	c.state.Store(-1) // no state yet, so Connecting is reported too
	go c.deliver()
	return c
}

// start opens the first connection and hands it to the supervisor.
func (c *Client) start(ctx context.Context) error {
	c.mu.Lock()
	c.setStateLocked(Connecting)
	c.mu.Unlock()
	cn, err := c.connect(ctx)
	if err != nil {
		c.Close()
		return err
	}
	c.mu.Lock()
	c.cur = cn
	close(c.ready)
	c.setStateLocked(Connected)
	c.mu.Unlock()
	c.wg.Add(1)
	go c.run(cn)
	return nil
}

// connect dials one connection, checks the codec and authenticates.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
	defer cancel()
	t, err := c.dial(ctx, c.url, dialConfig{
		subprotocols: []string{c.codec.Name()}, header: c.opts.HTTPHeader, netDial: c.opts.NetDial,
		deflate: c.opts.Deflate,
	})
	if err != nil {
		return nil, errtext.Wrap("client: dial "+c.url, err)
	}
	cd := c.codec
	switch sp := t.Subprotocol(); sp {
	case cd.Name():
	case "":
		// No subprotocol means the RTM default, JSON.
		if cd = rtmDefaultCodec(); cd == nil {
			_ = t.Close(websocket.StatusPolicyViolation, "no subprotocol")
			return nil, errors.New("client: dial " + c.url + ": the edge chose no subprotocol (JSON); this build speaks " + strconv.Quote(c.codec.Name()) + " only")
		}
	default:
		_ = t.Close(websocket.StatusPolicyViolation, "unexpected subprotocol")
		return nil, errors.New("client: dial " + c.url + ": the edge chose subprotocol " + strconv.Quote(sp) + ", not " + strconv.Quote(c.codec.Name()))
	}
	cn := newConn(t, cd, c.log, c)
	if err := c.authenticate(ctx, cn); err != nil {
		cn.close()
		return nil, err
	}
	return cn, nil
}

// setStateLocked records a new state and queues it for OnState.
func (c *Client) setStateLocked(s State) {
	if State(c.state.Swap(int32(s))) == s {
		return
	}
	if c.opts.OnState != nil {
		c.enqueueLocked(event{kind: evState, state: s})
	}
}

// State returns the state of the connection.
func (c *Client) State() State { return State(c.state.Load()) }

// waitConn returns the live connection, waiting while the client
// reconnects.
func (c *Client) waitConn(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		closed, cn, ready := c.closed, c.liveLocked(), c.ready
		c.mu.Unlock()
		switch {
		case closed:
			return nil, ErrClosed
		case cn != nil:
			return cn, nil
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.ctx.Done():
			return nil, ErrClosed
		}
	}
}

// liveLocked returns the live connection, nil while there is none. A
// connection that has failed is not live, although the supervisor may not
// have handled its loss yet (it first closes it, which can take a close
// handshake): the client lets go of it at once, so that requests made
// meanwhile wait for the next connection instead of failing on the dead
// one. lost finds it gone and does the rest.
func (c *Client) liveLocked() *conn {
	if cn := c.cur; cn != nil && cn.cause() != nil {
		c.cur = nil
		c.ready = make(chan struct{})
	}
	return c.cur
}

// do sends a request on the live connection and waits for its reply. A
// request that its connection, failing meanwhile, never sent waits for the
// next connection like one made while the client reconnects.
func (c *Client) do(ctx context.Context, action string, body, out any) error {
	for {
		cn, err := c.waitConn(ctx)
		if err != nil {
			return err
		}
		if err = cn.request(ctx, action, body, out); !errors.Is(err, errUnsent) {
			return c.closedErr(err)
		}
	}
}

// closedErr reports ErrClosed for a request cut off by Close rather than
// by the network.
func (c *Client) closedErr(err error) error {
	if err != nil && c.ctx.Err() != nil && errors.Is(err, ErrDisconnected) {
		return ErrClosed
	}
	return err
}

// signalWork wakes the supervisor for lagging subscriptions or orphans.
// It needs no lock: it only sends, without waiting.
func (c *Client) signalWork() {
	select {
	case c.work <- struct{}{}:
	default:
	}
}

// Close closes the connection (close code 1000), ends every subscription
// with ErrClosed and stops every goroutine of the client. Undelivered
// messages are dropped; OnState hears Closed last. Close waits for the
// goroutines to exit, except for a callback running at that moment (so a
// handler may call Close): that one returns on its own and no other
// callback starts. Close is idempotent and always returns nil; a second
// call returns at once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, s := range c.subs {
		c.endLocked(s, ErrClosed)
	}
	c.dropPendingLocked()
	c.orphans = nil
	c.cur = nil
	c.mu.Unlock()

	c.cancel()
	c.wg.Wait() // the supervisor closes its connection before exiting

	c.mu.Lock()
	c.dropPendingLocked() // whatever the connection queued while closing
	c.setStateLocked(Closed)
	c.q.stop = true
	select {
	case c.q.wake <- struct{}{}:
	default:
	}
	inCallback := c.q.running
	c.mu.Unlock()
	if !inCallback {
		<-c.q.done
	}
	return nil
}

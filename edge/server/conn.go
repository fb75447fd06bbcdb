package server

import (
	"bytes"
	"context"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/time/rate"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
)

// readOverhead is what a publish frame may carry beyond its message (action,
// id, channel name, map headers): frames up to twice the app's largest
// message plus this are read and refused with message_too_large if the
// message itself is too large; larger frames close the connection (1009).
const readOverhead = 16 << 10

// conn is one client connection. Its reader goroutine owns the request
// state (role, handshake, limiter, scratch buffers); its writer goroutine
// owns the cursors once a subscription is handed over; mu guards what
// they share.
type conn struct {
	srv    *Server
	app    *app.App
	ws     *websocket.Conn
	raw    net.Conn // the hijacked connection under ws; nil in tests that build conns by hand
	codec  codec.Codec
	ci     int // index of codec in codecs
	mtype  websocket.MessageType
	remote string

	// ctx ends when the connection is to close; the writer then sends the
	// close frame with closeCode and closeReason.
	ctx    context.Context
	cancel context.CancelFunc

	// Owned by the reader goroutine.
	role      string
	perms     app.Permissions
	grantEnd  time.Time // when a JWT grant expires; zero: no expiry
	handshake auth.Handshake
	limiter   *rate.Limiter
	readBuf   bytes.Buffer
	scratch   []byte
	// pubChannel and pubHandle cache the last channel published to.
	pubChannel string
	pubHandle  *store.Channel

	mu          sync.Mutex               // guards the fields below
	queue       []outItem                // replies and control items for the writer, in request order
	queued      int                      // bytes of encoded frames in queue
	subs        map[string]*subscription // live subscriptions by id
	closeCode   websocket.StatusCode     // set once, by the first closeWith
	closeReason string

	// wake is the writer's doorbell: a request enqueued or a cursor with
	// new data rings it; many rings before the writer looks coalesce into
	// one wake-up.
	wake       chan struct{}
	writerDone chan struct{}

	// watchdog closes a connection whose single write blocks past the
	// write timeout (the client stopped reading).
	watchdog *time.Timer
	pinger   pinger
}

// subscription is one live subscription. After the reader hands it over
// (under mu), only the writer reads its cursor.
type subscription struct {
	id          string
	channel     string
	cursor      *store.Cursor
	fastForward bool
}

// outItem is one entry of the writer's queue: an encoded frame, or the end
// of a subscription (with an unsubscribe/ok reply when id is set).
type outItem struct {
	frame []byte
	end   *subscription
	id    rtm.ID
	reply bool
}

// Wake implements store.Waker: it rings the writer's doorbell without
// blocking.
func (c *conn) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func newConn(s *Server, a *app.App, ws *websocket.Conn, remote string) *conn {
	cd, ci := codecFor(ws.Subprotocol())
	c := &conn{
		srv:        s,
		app:        a,
		ws:         ws,
		codec:      cd,
		ci:         ci,
		mtype:      websocket.MessageText,
		remote:     remote,
		role:       app.DefaultRole,
		limiter:    rate.NewLimiter(rate.Limit(s.limits.RequestsPerSecond), s.limits.RequestsPerSecond),
		subs:       make(map[string]*subscription),
		wake:       make(chan struct{}, 1),
		writerDone: make(chan struct{}),
	}
	if cd.Binary() {
		c.mtype = websocket.MessageBinary
	}
	if r, ok := a.Role(app.DefaultRole); ok {
		c.perms = r.Permissions
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.watchdog = time.AfterFunc(time.Hour, c.writeStuck)
	c.watchdog.Stop()
	return c
}

// run serves the connection until it ends: it reads and handles requests
// on the calling goroutine and runs the writer beside it.
func (c *conn) run() {
	c.ws.SetReadLimit(int64(2*c.app.MaxMessage() + readOverhead))
	go c.writeLoop()
	c.pinger.start(c)
	for {
		frame, err := c.readFrame()
		if err != nil {
			c.closeWith(websocket.StatusNormalClosure, "")
			c.logClose(err)
			break
		}
		c.srv.counters.bytesIn[c.ci].Add(uint64(len(frame)))
		c.handleFrame(frame)
		if c.ctx.Err() != nil {
			break
		}
	}
	c.pinger.stop()
	<-c.writerDone
	c.watchdog.Stop()
	c.mu.Lock()
	for id, sub := range c.subs {
		sub.cursor.Close()
		delete(c.subs, id)
		c.srv.counters.subscriptions.Add(-1)
	}
	c.mu.Unlock()
}

// readFrame reads one whole WebSocket message into the reused read buffer.
// The returned bytes are valid until the next call.
func (c *conn) readFrame() ([]byte, error) {
	_, r, err := c.ws.Reader(context.Background())
	if err != nil {
		return nil, err
	}
	c.readBuf.Reset()
	if _, err := c.readBuf.ReadFrom(r); err != nil {
		return nil, err
	}
	return c.readBuf.Bytes(), nil
}

// closeWith asks the writer to close the connection with code and reason;
// the first call decides them. It does not block.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closeCode == 0 {
		c.closeCode, c.closeReason = code, reason
	}
	c.mu.Unlock()
	c.cancel()
}

// abort drops the connection at once, without a close handshake. Closing
// the socket itself also ends a close handshake already waiting for the
// peer, which CloseNow would wait out.
func (c *conn) abort() {
	c.cancel()
	if c.raw != nil {
		c.raw.Close()
	}
	c.ws.CloseNow()
}

// writeStuck runs when a write has blocked past the write timeout.
func (c *conn) writeStuck() {
	c.srv.counters.slowCloses.Add(1)
	c.closeWith(websocket.StatusPolicyViolation, "write timeout: client is not reading")
	c.ws.CloseNow()
}

func (c *conn) logClose(err error) {
	c.mu.Lock()
	code, reason := c.closeCode, c.closeReason
	c.mu.Unlock()
	peer := websocket.CloseStatus(err)
	c.srv.log.Info("connection closed", "remote", c.remote, "appkey", c.app.Key,
		"codec", c.codec.Name(), "code", int(code), "reason", reason, "peer_code", int(peer),
		"read_error", errorKind(err))
}

// errorKind summarises a read error for logs without quoting client data.
func errorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case websocket.CloseStatus(err) != -1:
		return "peer closed"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return err.Error()
}

// enqueue hands an item to the writer. A client that lets its reply queue
// overflow (it sends requests but does not read) is closed with 1013.
func (c *conn) enqueue(it outItem) {
	c.mu.Lock()
	if c.queued+len(it.frame) > c.srv.limits.QueueBytes {
		c.mu.Unlock()
		c.srv.counters.slowCloses.Add(1)
		c.closeWith(websocket.StatusTryAgainLater, "outgoing queue full: client is not reading its replies")
		return
	}
	c.queue = append(c.queue, it)
	c.queued += len(it.frame)
	c.mu.Unlock()
	c.Wake()
}

package client

import (
	"errors"

	"github.com/sluicehq/sluice/shared/websocket"
)

// errSuspended ends the connection Suspend closes, and a connection
// made while the client was being suspended.
var errSuspended = errors.New("client: suspended")

// suspension is the state of Suspend; guarded by Client.mu.
type suspension struct {
	on      bool
	resumed chan struct{} // closed by Resume
	// woke says Resume came since the supervisor last looked
	// (awaitResume): a Resume right after Suspend, before the supervisor
	// came to wait for it, still reconnects at once.
	woke bool
}

// closeStarter is a transport that can start its closing handshake
// without waiting for it: a browser's WebSocket, whose page may be frozen
// (the back/forward cache) as soon as the event that suspends the client
// returns, before any goroutine runs.
type closeStarter interface {
	startClose(code websocket.StatusCode, reason string)
}

// Suspend closes the connection (close code 1000) and keeps the client
// from reconnecting until Resume; its subscriptions stay, and Resume
// resubscribes them from their positions, with no gap and no duplicate.
// The edge sees the connection end at once: the client's presence leaves
// its channels. For a page entering the browser's back/forward cache
// (client-js calls it on pagehide), or an app gone to the background.
// Requests made while suspended wait for Resume (or their context). It
// does not block; it is idempotent, and does nothing on a closed client.
func (c *Client) Suspend() {
	c.mu.Lock()
	if c.closed || c.susp.on {
		c.mu.Unlock()
		return
	}
	c.susp = suspension{on: true, resumed: make(chan struct{})}
	cn := c.cur
	c.mu.Unlock()
	if cn == nil {
		return // reconnecting: the supervisor waits for Resume before the next attempt
	}
	if s, ok := cn.t.(closeStarter); ok {
		s.startClose(websocket.StatusNormalClosure, "suspended")
	}
	cn.fail(errSuspended) // the supervisor closes it and waits
}

// Resume lets a suspended client connect again, at once, and resubscribe
// every subscription from its position. It does nothing on a client that
// is not suspended.
func (c *Client) Resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.susp.on {
		return
	}
	c.susp.on, c.susp.woke = false, true
	close(c.susp.resumed)
}

// suspended reports whether Suspend holds the client.
func (c *Client) suspended() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.susp.on
}

// awaitResume waits while the client is suspended; waited says it was
// (or was resumed since the last call), ok false that the client closed
// meanwhile.
func (c *Client) awaitResume() (waited, ok bool) {
	c.mu.Lock()
	on, resumed, woke := c.susp.on, c.susp.resumed, c.susp.woke
	c.susp.woke = false
	c.mu.Unlock()
	if !on {
		return woke, true
	}
	select {
	case <-resumed:
		return true, true
	case <-c.ctx.Done():
		return true, false
	}
}

package server

import (
	"context"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// pinger pings a connection every ping interval and closes it when a pong
// does not come back within the next interval. It runs on a timer, not on
// a goroutine of its own, so an idle connection costs no stack for it.
type pinger struct {
	mu      sync.Mutex // guards timer and stopped
	timer   *time.Timer
	stopped bool
	wg      sync.WaitGroup // the ping in flight, awaited by stop
}

func (p *pinger) start(c *conn) {
	interval := c.srv.limits.PingInterval
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(interval, func() {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		p.wg.Add(1)
		p.mu.Unlock()
		defer p.wg.Done()

		// Not c.ctx: a canceled write context makes the library drop the
		// connection without its close frame.
		ctx, cancel := context.WithTimeout(context.Background(), interval)
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil {
				c.closeWith(websocket.StatusPolicyViolation, "ping timeout: no pong from client")
			}
			return
		}
		p.mu.Lock()
		if !p.stopped {
			p.timer.Reset(interval)
		}
		p.mu.Unlock()
	})
}

// stop cancels future pings and waits for one in flight.
func (p *pinger) stop() {
	p.mu.Lock()
	p.stopped = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

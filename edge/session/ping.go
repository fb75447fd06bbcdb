package session

import (
	"sync"
	"time"

	"github.com/sluicehq/sluice/shared/websocket"
)

// pinger pings a connection every ping interval and closes it when no
// pong came back by the next one. It runs on a timer, not on a goroutine
// of its own, so an idle connection costs no stack for it.
type pinger struct {
	mu      sync.Mutex // guards the fields below
	timer   *time.Timer
	stopped bool
	sent    bool           // a ping is out
	pongs   uint64         // the pong count when it was sent
	wg      sync.WaitGroup // the tick in flight, awaited by stop
}

func (p *pinger) start(c *Session) {
	interval := c.edge.Limits.PingInterval
	p.mu.Lock()
	defer p.mu.Unlock()
	p.timer = time.AfterFunc(interval, func() {
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		p.wg.Add(1)
		pongs := c.WS().Pongs()
		late := p.sent && pongs == p.pongs
		p.sent, p.pongs = true, pongs
		p.mu.Unlock()
		defer p.wg.Done()

		if late {
			c.CloseWith(websocket.StatusPolicyViolation, "ping timeout: no pong from client")
			return
		}
		// A failed write leaves the connection broken: the next tick
		// finds no pong and closes it.
		_ = c.WS().Ping()
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

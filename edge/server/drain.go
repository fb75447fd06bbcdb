package server

import (
	"context"
	"sync"
	"time"

	"github.com/sluicehq/sluice/edge/session"
	"github.com/sluicehq/sluice/shared/websocket"
)

// A drain in two steps, so that clients move to other edges without
// being refused and without all arriving there at once:
//
//  1. BeginDrain: Ready reports "draining" (a load balancer's /readyz
//     answers 503) while the edge goes on serving everything, new
//     connections included, for as long as the balancer takes to notice;
//  2. Shutdown: new connections are refused, and the open ones are closed
//     with 1001 "going away", spread over Limits.DrainSpread so that
//     their reconnects do not land on the next edge in one storm.

// drainState is how a drain ends its waits early.
type drainState struct {
	hurry chan struct{} // closed by Hurry: a drain's spread ends at once
	once  sync.Once
}

// BeginDrain makes Ready report that the edge is draining, while it keeps
// serving; Shutdown follows. It is idempotent.
func (s *Server) BeginDrain() {
	s.conns.mu.Lock()
	s.conns.unready = true
	s.conns.mu.Unlock()
}

// Hurry ends the waits of a drain: Shutdown closes at once the
// connections its spread has not reached yet (an operator's second
// signal). It is idempotent, and may come before Shutdown.
func (s *Server) Hurry() {
	s.drain.once.Do(func() { close(s.drain.hurry) })
}

// closeSpread tells every connection of conns to go away, the i-th of n
// DrainSpread*i/n after the first (at once without a spread, or when
// hurried), and returns once all are told or ctx ends (Shutdown then
// drops the rest). Those due together are closed together, so that even
// 100,000 connections over a few seconds cost no timer per connection.
func (s *Server) closeSpread(ctx context.Context, conns []*session.Session) {
	spread, n := s.limits.DrainSpread, len(conns)
	if spread <= 0 || n < 2 {
		closeAll(conns)
		return
	}
	step := spread / time.Duration(n)
	start := time.Now()
	t := time.NewTimer(spread)
	defer t.Stop()
	for next := 0; next < n; {
		due := min(n, int(time.Since(start)/max(step, 1))+1)
		closeAll(conns[next:due])
		next = due
		if next == n {
			return
		}
		t.Reset(time.Until(start.Add(step * time.Duration(next))))
		select {
		case <-t.C:
		case <-s.drain.hurry:
			closeAll(conns[next:])
			return
		case <-ctx.Done():
			return
		}
	}
}

// closeAll tells every connection of conns to go away.
func closeAll(conns []*session.Session) {
	for _, c := range conns {
		c.CloseWith(websocket.StatusGoingAway, goingAway)
	}
}

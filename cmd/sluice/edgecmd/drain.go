package edgecmd

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The drain on stop. SIGTERM is what orchestrators and service managers
// (systemd, Kubernetes, Docker) send before they move the traffic; Run
// calls Edge.Shutdown for it: the edge then reports not-ready for
// drain_delay while it serves on, so that load balancers see the 503 and
// stop sending clients, then closes its connections spread over
// drain_spread, so that their reconnects do not hit the other edges in
// one storm. SIGINT is a person at a terminal; Run calls Edge.Close: the
// edge closes everything at once. During a slow drain, each further
// signal (or Shutdown's ctx ending, or Close) ends the wait under way: the
// delay, then the spread.

// drainTimes are the drain's settings.
type drainTimes struct {
	delay time.Duration // not-ready while serving, before any close (SIGTERM only)
	grace time.Duration // bounds the closing, from its start
}

// slowDrain says whether the drain is the slow one: the edge was stopped
// by Shutdown (which Run calls on SIGTERM), and was serving fine. Close
// (SIGINT), a lost stream or a failed listener drain at once.
func slowDrain(stopping context.Context, failed error) bool {
	return failed == nil && errors.Is(context.Cause(stopping), errShutdown)
}

// drain shuts the edge down: slowly (see above) or at once. Connections
// still open at the grace deadline are dropped; that is logged, not an
// error. During a slow drain each value from again (a further signal,
// Edge.hurry) ends the wait under way.
func (l *listeners) drain(d drainTimes, slow bool, again <-chan struct{}) {
	grace := d.grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	if !slow {
		l.srv.Hurry() // no spread
	}
	if slow && d.delay > 0 {
		l.srv.BeginDrain()
		l.log.Info("draining: /readyz answers 503; serving on so that load balancers stop sending clients", "delay", d.delay.String())
		t := time.NewTimer(d.delay)
		select {
		case <-t.C:
		case <-again:
			l.log.Info("draining: another signal; not waiting for the delay's end")
		}
		t.Stop()
	}
	l.log.Info("draining: refusing new connections, closing open ones with 1001 going away", "deadline", grace.String())
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	var wg sync.WaitGroup
	if slow {
		wg.Go(func() { // another signal ends the spread
			select {
			case <-again:
				l.log.Info("draining: another signal; closing the remaining connections at once")
				l.srv.Hurry()
			case <-sctx.Done():
			}
		})
	}
	err := l.srv.Shutdown(sctx) // readyz turns 503 now unless it already has
	for _, hs := range l.servers {
		if e := hs.Shutdown(sctx); e != nil {
			hs.Close() // the deadline passed: drop what remains
		}
	}
	cancel()
	wg.Wait()
	if l.certs != nil {
		l.certs.Close()
	}
	if err != nil {
		// Still a clean exit: the deadline is the operator's choice.
		l.log.Warn("drain deadline passed; the remaining connections were dropped", "err", err)
	}
	l.log.Info("stopped")
}

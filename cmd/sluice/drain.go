package main

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The drain on stop. SIGTERM is what orchestrators and service managers
// (systemd, Kubernetes, Docker) send before they move the traffic: the
// edge then reports not-ready for drain_delay while it serves on, so that
// load balancers see the 503 and stop sending clients, then closes its
// connections spread over drain_spread, so that their reconnects do not
// hit the other edges in one storm. SIGINT is a person at a terminal: the
// edge closes everything at once. During a slow drain, each further
// signal ends the wait under way: the delay, then the spread.

// drainTimes are the drain's settings.
type drainTimes struct {
	delay time.Duration // not-ready while serving, before any close (SIGTERM only)
	grace time.Duration // bounds the closing, from its start
}

// slowDrain says whether the drain is the slow one: the edge was stopped
// by SIGTERM, and was serving fine. main's signal.NotifyContext records
// the signal as the context's cause, "terminated signal received"; a
// cancel without a signal (runEdge in tests) drains at once.
func slowDrain(ctx context.Context, failed error) bool {
	cause := context.Cause(ctx)
	return failed == nil && cause != nil && strings.HasPrefix(cause.Error(), syscall.SIGTERM.String()+" ")
}

// drain shuts the edge down: slowly (see above) or at once. Connections
// still open at the grace deadline are dropped; that is logged, not an
// error.
func (l *listeners) drain(d drainTimes, slow bool, sigs *stopSignals) {
	grace := d.grace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	var again <-chan struct{} // a value per further signal
	if slow {
		again = sigs.again()
	} else {
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

// stopSignals receives the stop signals on a channel of its own, beside
// main's signal.NotifyContext, for the drain to hear a second one.
type stopSignals struct {
	ch   chan os.Signal
	done chan struct{}
	wg   sync.WaitGroup
}

// notifyStops starts receiving SIGINT and SIGTERM; stop ends it.
func notifyStops() *stopSignals {
	s := &stopSignals{ch: make(chan os.Signal, 2), done: make(chan struct{})}
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	return s
}

// again returns a channel that gets a value for each signal after the one
// that began the drain (which reaches this channel too). Call it once.
func (s *stopSignals) again() <-chan struct{} {
	more := make(chan struct{}, 2)
	s.wg.Go(func() {
		for seen := 0; ; {
			select {
			case <-s.ch:
				if seen++; seen > 1 {
					select {
					case more <- struct{}{}:
					default: // the drain has not taken the last one yet: enough
					}
				}
			case <-s.done:
				return
			}
		}
	})
	return more
}

// stop stops receiving signals and waits for again's goroutine.
func (s *stopSignals) stop() {
	signal.Stop(s.ch)
	close(s.done)
	s.wg.Wait()
}

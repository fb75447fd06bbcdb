package edgecmd

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

// Run is `sluice edge` once its configuration is loaded: it starts the
// edge and serves until ctx ends, then stops it, and returns why it
// stopped. The process's main gives it a ctx from signal.NotifyContext
// for SIGINT and SIGTERM: SIGTERM (what orchestrators and service
// managers send) stops the edge as Shutdown does, and each further
// signal cuts the drain's wait under way short; SIGINT (a person at a
// terminal), or ctx ending for any other reason, stops it as Close does.
func Run(ctx context.Context, cfg *Config, opts *Options) error {
	sigs := notifyStops() // before serving: a signal from now on is seen
	defer sigs.stop()
	e, err := Start(ctx, cfg, opts)
	if err != nil {
		return err
	}
	e.applyMemoryLimit(cfg)
	select {
	case <-ctx.Done():
	case <-e.Done():
		return e.Wait()
	}
	if !terminated(ctx) {
		return e.Close()
	}
	e.beginStop(errShutdown)
	more := sigs.again()
	for {
		select {
		case <-more:
			e.hurryOne()
		case <-e.Done():
			return e.Wait()
		}
	}
}

// terminated says whether ctx ended on SIGTERM: main's
// signal.NotifyContext records the signal as the context's cause,
// "terminated signal received".
func terminated(ctx context.Context) bool {
	cause := context.Cause(ctx)
	return cause != nil && strings.HasPrefix(cause.Error(), syscall.SIGTERM.String()+" ")
}

// stopSignals receives the stop signals on a channel of its own, beside
// main's signal.NotifyContext, for Run to hear a second one.
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

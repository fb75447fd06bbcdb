package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// churn kills subscribers at random, Config.Churn a second, until ctx
// ends: each kill drops a subscriber's connection abruptly, and its
// client resumes by position on a new one. What the subscribers then
// receive is checked as always, so a message lost, repeated or reordered
// across a kill and resume shows in the result.
type churn struct {
	killed atomic.Uint64 // connections dropped
	missed atomic.Uint64 // picks that found the subscriber reconnecting
	wg     sync.WaitGroup
	stop   context.CancelFunc
}

// startChurn starts killing subscribers, when the configuration asks
// for it, until stop is called. It fails when a subscriber's Conn cannot
// be killed.
func (r *run) startChurn(ctx context.Context) (*churn, error) {
	ch := &churn{stop: func() {}}
	if r.cfg.Churn <= 0 {
		return ch, nil
	}
	var victims []Killer
	for _, c := range r.subConns {
		if c == nil {
			continue
		}
		k, ok := c.(Killer)
		if !ok {
			return nil, fmt.Errorf("%w: churn: %s connections cannot be killed", ErrConfig, r.d.Name())
		}
		victims = append(victims, k)
	}
	if len(victims) == 0 {
		return ch, nil
	}
	ctx, ch.stop = context.WithCancel(ctx)
	every := time.Duration(float64(time.Second) / r.cfg.Churn)
	ch.wg.Go(func() {
		var pace pacer
		for next := time.Now().Add(every); pace.until(ctx, next); next = next.Add(every) {
			if victims[rand.IntN(len(victims))].Kill() {
				ch.killed.Add(1)
			} else {
				ch.missed.Add(1)
			}
		}
	})
	return ch, nil
}

// end stops the kills, waits for the killing goroutine and records what
// it did.
func (ch *churn) end(res *Result) {
	ch.stop()
	ch.wg.Wait()
	res.Killed = ch.killed.Load()
	res.KillsMissed = ch.missed.Load()
}

package chanlog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// Pending is an append the log answers later: its position once stored,
// or why not.
type Pending struct {
	mu   sync.Mutex
	done bool
	pos  rtm.Position
	err  error
	then func(rtm.Position, error) // set by Then; called once, on answer
	ch   chan struct{}             // made by Wait; closed on answer
}

// answer records the log's answer and tells whoever waits for it.
func (p *Pending) answer(pos rtm.Position, err error) {
	p.mu.Lock()
	p.done, p.pos, p.err = true, pos, err
	then, ch := p.then, p.ch
	p.mu.Unlock()
	if then != nil {
		then(pos, err)
	}
	if ch != nil {
		close(ch)
	}
}

// Then calls f with the answer once there is one: at once if it came
// already, else on the goroutine that brings it. f must not block. Call
// Then or Wait, once.
func (p *Pending) Then(f func(rtm.Position, error)) {
	p.mu.Lock()
	if !p.done {
		p.then = f
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	f(p.pos, p.err)
}

// fateGrace is how long past a request's deadline Wait waits for the
// journal's own answer, which the journal gives at the same deadline on
// its next tick (0.1 s): that answer says exactly whether the publish
// was sent.
const fateGrace = 500 * time.Millisecond

// ErrInFlight says a request's deadline passed while its append was in
// flight, and the log did not answer within a grace: its fate is
// unknown.
var ErrInFlight = fmt.Errorf("chanlog: the request's deadline passed with its append in flight: %w", store.ErrFateUnknown)

// Wait waits for the answer. Once ctx ends it waits a short grace more
// for the log's own answer (its deadline is ctx's), then gives up:
// ErrInFlight, or ctx's error if ctx was canceled.
func (p *Pending) Wait(ctx context.Context) (rtm.Position, error) {
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return p.pos, p.err
	}
	p.ch = make(chan struct{})
	ch := p.ch
	p.mu.Unlock()
	select {
	case <-ch:
		return p.result()
	case <-ctx.Done():
	}
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return rtm.Position{}, ctx.Err()
	}
	grace := time.NewTimer(fateGrace)
	defer grace.Stop()
	select {
	case <-ch:
		return p.result()
	case <-grace.C:
		return rtm.Position{}, ErrInFlight
	}
}

func (p *Pending) result() (rtm.Position, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos, p.err
}

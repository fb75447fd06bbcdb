package loadgen

import (
	"context"
	"sync/atomic"
	"time"
)

// gate is one publisher's flow control: it counts the deliveries the
// publisher's messages are owed (one per subscriber of their channel) and
// those made, and holds the publisher while more than limit are owed.
// Once held, the publisher resumes when the debt falls to half the limit,
// so that it wakes once per half window rather than once per delivery.
type gate struct {
	limit uint64 // deliveries that may be owed; set by size before the lane runs

	// owed is written by the publisher only, read by nobody else.
	owed uint64
	// writtenOff is deliveries the publisher gave up waiting for
	// (lost messages); publisher-only too.
	writtenOff uint64
	// made counts deliveries; added to by every subscriber's delivery
	// goroutine.
	made atomic.Uint64
	// wakeAt is the count of made at which the waiting publisher wants
	// to be woken, 0 when it is not waiting. Stored by the publisher,
	// cleared by the delivery that reaches it.
	wakeAt atomic.Uint64
	wake   chan struct{} // capacity 1
	// clock makes stallTimer; nil means wall-clock time.
	clock giveUpClock
	// stallTimer times the publisher's waits, one timer reused;
	// publisher-only.
	stallTimer giveUpTimer
}

func newGate(window, fanout int) *gate {
	g := &gate{wake: make(chan struct{}, 1)}
	g.size(window, fanout)
	return g
}

// size sets the limit to window messages of fanout deliveries each,
// before the publisher runs.
func (g *gate) size(window, fanout int) { g.limit = uint64(window) * uint64(fanout) }

// published records a message owed fanout deliveries (publisher only).
func (g *gate) published(fanout int) { g.owed += uint64(fanout) }

// refused takes back a message the server did not store (publisher only).
func (g *gate) refused(fanout int) { g.owed -= uint64(fanout) }

// delivered records one delivery (any goroutine).
func (g *gate) delivered() {
	n := g.made.Add(1)
	if w := g.wakeAt.Load(); w != 0 && n >= w && g.wakeAt.CompareAndSwap(w, 0) {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// debt returns the deliveries still owed (publisher only).
func (g *gate) debt() uint64 {
	paid := g.made.Load() + g.writtenOff
	if paid >= g.owed {
		return 0
	}
	return g.owed - paid
}

// open reports whether the publisher may publish now (publisher only).
func (g *gate) open() bool { return g.limit == 0 || g.debt() <= g.limit }

// wait holds the publisher while the debt is over the limit. After stall
// without progress it writes the debt off and returns ErrStalled; it
// returns ctx's error when ctx ends.
func (g *gate) wait(ctx context.Context, stall time.Duration) error {
	if g.open() {
		return nil
	}
	for g.debt() > g.limit/2 {
		// Woken when made reaches owed - writtenOff - limit/2.
		target := g.owed - g.writtenOff - g.limit/2
		g.wakeAt.Store(target)
		before := g.made.Load()
		if before >= target {
			g.wakeAt.Store(0)
			continue
		}
		t := g.timer(stall)
		select {
		case <-g.wake:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
			g.wakeAt.Store(0)
			return ctx.Err()
		case <-t.C():
			g.wakeAt.Store(0)
			if g.made.Load() == before {
				g.writtenOff += g.debt()
				return ErrStalled
			}
		}
	}
	return nil
}

// timer returns the stall timer, started for d.
func (g *gate) timer(d time.Duration) giveUpTimer {
	if g.stallTimer == nil {
		if g.clock == nil {
			g.clock = wallClock{}
		}
		g.stallTimer = g.clock.newTimer(d)
	} else {
		g.stallTimer.Reset(d) // stopped or fired: no stale tick is left
	}
	return g.stallTimer
}

// drained reports whether nothing is owed any more (any goroutine, once
// the publisher has stopped).
func (g *gate) drained() bool { return g.debt() == 0 }

package loadgen

import (
	"context"
	"errors"
	"sync/atomic"
)

// asyncState hands a lane back and forth between its goroutine and the
// acknowledgments of its publishes, when its Conn is an AsyncPublisher.
// At max rate the acknowledgment of one message publishes the next (the
// client then writes the publishes that one read's acknowledgments set
// off together); the lane goroutine takes over to wait: for the gate, the
// next tick of a fixed rate, or the end of the run.
type asyncState struct {
	state atomic.Int32 // laneIdle, ...: who has the lane
	i     int          // the channel position of the message in flight

	// Set by startAsync, before the lane's first publish.
	resume chan struct{}   // capacity 1: the lane is the goroutine's again
	ctx    context.Context // the chains stop publishing when it ends
	r      *run
	ap     AsyncPublisher
	done   func(error) // lane.acked, bound once
}

// Who has the lane.
const (
	laneIdle      int32 = iota // its goroutine
	laneInflight               // nobody: a publish is outstanding
	laneAcking                 // the publish's acknowledgment
	laneAbandoned              // nobody: the goroutine gave the publish up
)

// startAsync prepares the lane to publish through ap for its whole run,
// its chains stopping when ctx ends.
func (l *lane) startAsync(ctx context.Context, r *run, ap AsyncPublisher) {
	a := &l.async
	a.resume, a.ctx, a.r = make(chan struct{}, 1), ctx, r
	a.ap, a.done = ap, l.acked
}

// publishAsync publishes channel position i and, while it can, the next
// ones from the acknowledgments. It returns the position of the last
// message published, or -1 when the publish outstanding as ctx ended was
// not acknowledged within the drain time: that one is counted as stored,
// so that it shows if it was lost.
func (l *lane) publishAsync(ctx context.Context, i int) int {
	a := &l.async
	l.sendAsync(i)
	select {
	case <-a.resume:
		return a.i
	case <-ctx.Done():
	}
	// The drain time counts from here, once the driver has the publish
	// outstanding (sendAsync returned, or the acknowledgment that chains
	// it is running): a give-up clock that watches the driver then sees
	// it.
	t := a.r.giveUp.newTimer(a.r.cfg.Drain)
	defer t.Stop()
	select {
	case <-a.resume:
	case <-t.C():
		if a.state.CompareAndSwap(laneInflight, laneAbandoned) {
			l.settle(a.r, a.i, errNoAck)
			return -1
		}
		<-a.resume // an acknowledgment is being handled; it hands back
	}
	return a.i
}

// errNoAck is counted for a publish given up at the end of a run.
var errNoAck = errors.New("loadgen: no acknowledgment before the drain ended")

// sendAsync publishes channel position i; the caller has the lane.
func (l *lane) sendAsync(i int) {
	a := &l.async
	a.i = i
	ch, payload := l.next(a.r, i)
	a.state.Store(laneInflight)
	if err := a.ap.PublishAsync(ch, payload, a.done); err != nil {
		// Not sent, so nothing was stored and no acknowledgment comes:
		// the lane is the caller's again, unless the goroutine gave it
		// up meanwhile.
		if a.state.CompareAndSwap(laneInflight, laneAcking) {
			if errors.Is(err, ErrRefused) {
				l.settle(a.r, i, err)
			} else {
				l.unsent(a.r, i, err)
			}
			l.handBack()
		}
	}
}

// acked is the outcome of the publish in flight: it publishes the next
// message at once when it can, else hands the lane back.
func (l *lane) acked(err error) {
	a := &l.async
	if !a.state.CompareAndSwap(laneInflight, laneAcking) {
		return // given up
	}
	l.settle(a.r, a.i, err)
	if a.ctx.Err() == nil && l.interval == 0 && l.gate.open() {
		l.sendAsync((a.i + 1) % len(l.channels))
		return
	}
	l.handBack()
}

// handBack gives the lane to its goroutine.
func (l *lane) handBack() {
	l.async.state.Store(laneIdle)
	l.async.resume <- struct{}{}
}

package chanlog

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// CatchUp is the part of a subscription's history that the edge's
// replica does not hold: offsets from Next up to where the
// subscription's cursor starts (exclusive), read from the log before the
// cursor. Its reader alone uses it.
type CatchUp struct {
	l           *Journaled
	key         string
	next, until uint64
	lagged      int // times the log's copy was found behind until
}

// catchUp returns key's catch-up from offset from up to until.
func (l *Journaled) catchUp(key string, from, until uint64) *CatchUp {
	return &CatchUp{l: l, key: key, next: from, until: until}
}

// Next is the offset the catch-up reads next: the subscription's
// position while it lasts.
func (cu *CatchUp) Next() uint64 { return cu.next }

// logBatch is how many messages one catch-up read asks the log for.
const logBatch = 256

// Read returns the next messages of the catch-up, at most about maxBytes
// of them, and whether it is complete: the subscription's cursor has the
// rest. An error says the log could not be read, or its copy that
// answers reads stayed behind; the subscription cannot go on without a
// gap (its client resubscribes from its position).
func (cu *CatchUp) Read(ctx context.Context, maxBytes int) ([]store.Frame, bool, error) {
	rctx, cancel := context.WithTimeout(ctx, logTimeout)
	frames, more, err := cu.l.jn(cu.key).Next(rctx, cu.key, cu.next, logBatch, maxBytes)
	cancel()
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	n := 0
	for n < len(frames) && frames[n].Offset < cu.until {
		n++
	}
	done := false
	switch {
	case n < len(frames):
		done = true // the rest is in the replica
	case more == 0:
		// Nothing more, says the log's copy that answered: complete only
		// if that copy has reached where the replica starts.
		if done, err = cu.reached(ctx); err != nil {
			return nil, false, err
		}
	}
	if n > 0 {
		cu.next = frames[n-1].Offset + 1
	}
	return frames[:n], done, nil
}

// logLagTries bounds how often a catch-up waits for a lagging copy of the
// log (logLagPause apart): as long as one log read may take. Past it the
// catch-up fails rather than end on the lagging copy's answer, which
// would leave a gap.
const (
	logLagPause = 20 * time.Millisecond
	logLagTries = int(logTimeout / logLagPause)
)

// errLogLags says the log's copy that answers reads stayed behind.
var errLogLags = errors.New("chanlog: the log's copy answering reads stays behind this edge")

// reached reports whether the log's copy answering reads holds the
// offsets up to the replica's start; if not, it pauses a little so that
// the reader asks again.
func (cu *CatchUp) reached(ctx context.Context) (bool, error) {
	rctx, cancel := context.WithTimeout(ctx, logTimeout)
	ok, err := cu.l.jn(cu.key).Reached(rctx, cu.until-1)
	cancel()
	switch {
	case err != nil:
		return false, fmt.Errorf("%w: %w", ErrUnreadable, err)
	case ok:
		return true, nil
	case cu.lagged >= logLagTries:
		return false, fmt.Errorf("%w: offset %d", errLogLags, cu.until-1)
	}
	cu.lagged++
	t := time.NewTimer(logLagPause)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	return false, nil
}

// End is called once Read said the catch-up is complete. A purge may
// have dropped messages the catch-up still owed: the log went on past
// them without a word, and the cursor, at the replica's start, may read
// on past the purge as well (its edge applied it before the cursor was
// opened, or has not yet). Then End returns a *store.OutOfSyncError for
// the subscription; ErrUnreadable if the log cannot say; else nil.
func (cu *CatchUp) End(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, logTimeout)
	through, err := cu.l.jn(cu.key).PurgedThrough(rctx, cu.key)
	cancel()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	if through < cu.next {
		return nil
	}
	epoch := cu.l.epoch(cu.key)
	return &store.OutOfSyncError{Missed: 1,
		Position: rtm.Position{Epoch: epoch, Offset: cu.next}, Head: rtm.Position{Epoch: epoch, Offset: through + 1}}
}

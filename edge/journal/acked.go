package journal

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// errClosed says the journal is closed.
var errClosed = errors.New("journal: closed")

// Acknowledged returns the stream's last sequence as its leader holds it
// at some moment after the call began: every publish acknowledged before
// the call, by any edge, is at or below it. A subscribe that waits until
// this edge's store has applied it starts after everything a client could
// have been told was stored (its live part) and counts its history from
// there, on any edge.
//
// Calls are coalesced: one look at the stream at a time, and a call that
// comes while one is under way waits for the next, which starts after
// it: a storm of resubscribes costs a few looks, not one each.
func (j *Journal) Acknowledged(ctx context.Context) (uint64, error) {
	c := j.acked.join(j)
	if c == nil {
		return 0, fmt.Errorf("journal: the stream's last sequence: %w", errClosed)
	}
	select {
	case <-c.done:
		return c.last, c.err
	case <-ctx.Done():
		return 0, fmt.Errorf("journal: the stream's last sequence: %w", ctx.Err())
	}
}

// ackedLooks coalesces Acknowledged's looks at the stream.
type ackedLooks struct {
	mu      sync.Mutex
	running bool       // a look is under way
	next    *ackedLook // the look after it, which later callers join
	// closed is set by the journal's Close before it waits for its
	// goroutines: no look starts after it (so none is added to the wait
	// group while Close waits).
	closed bool
}

// ackedLook is one look at the stream's last sequence.
type ackedLook struct {
	done chan struct{} // closed once last and err are set
	last uint64
	err  error
}

// ackedTimeout bounds one look; a caller's ctx may end its wait sooner.
const ackedTimeout = getTimeout

// join returns a look that starts after the call: a new one at once if
// none is under way, else the one that follows it; nil once closed.
func (a *ackedLooks) join(j *Journal) *ackedLook {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	if a.next == nil {
		a.next = &ackedLook{done: make(chan struct{})}
	}
	c := a.next
	if !a.running {
		a.running, a.next = true, nil
		j.wg.Go(func() { a.run(j, c) })
	}
	return c
}

// run makes look c, then the looks callers joined meanwhile, one after
// the other, until none is waiting.
func (a *ackedLooks) run(j *Journal, c *ackedLook) {
	for c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), ackedTimeout)
		_, c.last, c.err = j.Bounds(ctx)
		cancel()
		close(c.done)
		a.mu.Lock()
		c, a.next = a.next, nil
		a.running = c != nil
		a.mu.Unlock()
	}
}

// close makes join refuse from now on; looks under way end by their
// timeout, or sooner as the connection closes.
func (a *ackedLooks) close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
}

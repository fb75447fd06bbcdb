package delivery

import (
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/sluicehq/sluice/shared/websocket"
)

// The fan-out workers make the writer passes of idle connections woken
// by the store, so that a delivery costs no goroutine of its own: with a
// thousand subscribers of a channel, a message used to start a thousand
// writer goroutines (each started, scheduled and ended for one write),
// which cost the edge about a tenth of its CPU at a steady rate.
//
// When the store's notifier wakes an idle connection, Wake queues it on
// its worker (one per core; a connection keeps its worker, so its state
// stays in one core's cache) instead of starting a goroutine. The worker
// makes a direct pass: the same pass as the writer goroutine's, with
// writes that never block (websocket.Conn.TryWrite). Whatever the pass
// cannot finish without waiting (a socket that is full, a reply or close
// to send, a catch-up from the log, a view, an error to report) it hands
// to a writer goroutine of the connection's own, with the output not yet
// written, so that a slow peer holds up nobody else: it goes on exactly
// as before, with its write timeout and queue bounds.
//
// A worker runs while it has connections queued and ends when it has
// none, as writer goroutines do: nothing to stop at shutdown.

// fanWorker is one fan-out worker's queue.
type fanWorker struct {
	mu      sync.Mutex // guards queued and running; a leaf lock
	queued  []*Conn    // mu: connections whose writer state Wake set to writerRunning
	running bool       // mu: the worker's goroutine is running
	taken   []*Conn    // the worker's: the queue being served, swapped with queued
	// Padding keeps the lock, which Wake takes, off the cache lines of
	// shared, which the worker reads for each delivery, and off the next
	// worker's.
	_      [64]byte
	shared sharedFrames // the worker's: its passes' last data frames (shared.go)
	_      [64]byte
}

// fanout is the edge's fan-out workers.
type fanout struct {
	workers []fanWorker
	next    atomic.Uint32 // the worker of the next connection, round-robin
}

func newFanout() *fanout {
	return &fanout{workers: make([]fanWorker, runtime.GOMAXPROCS(0))}
}

// worker returns the worker of a new connection.
func (f *fanout) worker() *fanWorker {
	return &f.workers[int(f.next.Add(1)-1)%len(f.workers)]
}

// push queues c, whose writer state its caller just set to writerRunning,
// for a direct pass.
func (wk *fanWorker) push(c *Conn) {
	wk.mu.Lock()
	wk.queued = append(wk.queued, c)
	start := !wk.running
	wk.running = true
	wk.mu.Unlock()
	if start {
		go wk.run()
	}
}

// run serves the queue until it is empty.
func (wk *fanWorker) run() {
	w := writers.Get().(*writer)
	w.share = &wk.shared
	defer func() { w.release() }()
	for {
		wk.mu.Lock()
		list := wk.queued
		if len(list) == 0 {
			// Before running is cleared, which lets another run start:
			// an idle worker keeps no block alive.
			wk.shared.reset()
			wk.running = false
			wk.mu.Unlock()
			return
		}
		wk.queued = wk.taken[:0]
		wk.mu.Unlock()
		for _, c := range list {
			switch c.directPass(w) {
			case passAgain:
				// More is ready: the connection goes to the back of the
				// queue, behind those woken with it, rather than to a
				// goroutine of its own.
				wk.mu.Lock()
				wk.queued = append(wk.queued, c)
				wk.mu.Unlock()
			case passHandOff:
				w.share = nil         // the worker's, not the goroutine's
				go c.writeLoopFrom(w) // w holds what is not written yet
				w = writers.Get().(*writer)
				w.share = &wk.shared
			}
		}
		clear(list) // a closed connection is not kept by the list
		wk.taken = list[:0]
	}
}

// errWouldBlock stops a direct pass at a write that would wait for the
// peer: the writer goroutine the worker starts writes the rest.
var errWouldBlock = errors.New("delivery: write would block")

// The outcomes of a direct pass.
const (
	passDone    = iota // the writer is idle again
	passAgain          // more is ready, or a Wake came: another pass follows
	passHandOff        // a writer goroutine takes over (the pass could not go on without blocking)
)

// directPass is a writer pass (writePass) made by a fan-out worker for a
// connection it holds in writerRunning. For passHandOff the caller hands
// the writer's state, output not written included, to a writer
// goroutine. It does only what cannot block or take long: a pass with
// a subscription's end or a close queued, or subscriptions other than
// plain ones (catch-ups, views, prefixes), is left whole to the
// goroutine. Queued replies it writes first, as writePass does: a
// durable edge's publish replies come from the journal, which wakes the
// connection, and left to a goroutine started for each they cost a
// quarter of a publish's CPU on channels-json.
func (c *Conn) directPass(w *writer) int {
	c.out.writer.look() // a Wake from now on asks for another pass
	if c.out.closed.Load() {
		return passHandOff // the close frame is written by the goroutine
	}
	c.mu.Lock()
	subs := c.live
	plain := c.out.repliesOnlyLocked() && plainSubs(subs)
	full := false
	if plain {
		full = c.out.fullLocked()
		w.items = c.out.takeLocked(w.items)
	}
	c.mu.Unlock()
	if !plain {
		return passHandOff
	}
	if full {
		c.owner.Unblock() // as takeWork: the reader may wait for room
	}
	w.direct = true
	err := c.writeReplies(w)
	if err == nil {
		err = c.pumpDirect(w, subs)
	}
	w.direct = false
	switch {
	case err != nil:
		return passHandOff
	case c.arm(subs) && c.out.writer.rest():
		return passDone
	}
	return passAgain
}

// plainSubs reports whether every subscription of subs is a plain one,
// which a direct pass serves.
func plainSubs(subs []*Subscription) bool {
	for _, sub := range subs {
		if sub.CatchUp != nil || sub.View != nil || sub.group != nil {
			return false
		}
	}
	return true
}

// writeReplies adds the replies a direct pass took from the queue
// (frames only: repliesOnlyLocked) to its output. What does not go out
// at once stays in w.out for the writer goroutine, ahead of the rest.
func (c *Conn) writeReplies(w *writer) error {
	var err error
	for i := range w.items {
		frame := w.items[i].frame
		switch {
		case err == nil:
			err = c.write(w, frame)
		case errors.Is(err, errWouldBlock):
			// Behind what did not go out: the goroutine writes it all.
			w.out = c.ws.AppendFrame(w.out, c.op, frame)
			c.count(len(frame))
		}
	}
	clear(w.items)
	w.items = w.items[:0]
	return err
}

// pumpDirect sends a batch of each subscription of subs and flushes.
// On a read error (out of sync) it stops: the goroutine reads again and
// reports it, since ending a subscription may block (presence, hooks).
func (c *Conn) pumpDirect(w *writer, subs []*Subscription) error {
	for _, sub := range subs {
		var err error
		if w.frames, err = sub.Cursor.Read(w.frames[:0], maxBatchBytes); err != nil {
			if err = c.flush(w); err == nil {
				err = errWouldBlock
			}
			return err
		}
		if err = c.send(w, sub, w.frames); err != nil {
			return err
		}
	}
	return c.flush(w)
}

// tryFlush is flush for a direct pass: it writes the gathered frames
// without blocking, or returns errWouldBlock with what is not written
// either in w.out (nothing of it went out) or kept by the connection
// (w.kept).
func (c *Conn) tryFlush(w *writer) error {
	res, err := c.ws.TryWrite(w.out)
	if err != nil {
		w.out = w.out[:0]
		c.writeFailed(err)
		return err
	}
	switch res {
	case websocket.TryWritten:
		w.out = w.out[:0]
		return nil
	case websocket.TryKept:
		w.out = w.out[:0]
		w.kept = true
	}
	return errWouldBlock
}

// writeLoopFrom is writeLoop for a writer whose state a direct pass
// handed over: it first writes what the pass left, blocking as a writer
// goroutine may.
func (c *Conn) writeLoopFrom(w *writer) {
	defer w.release()
	if len(w.out) > 0 || w.kept {
		w.kept = false
		err := c.ws.Write(w.out) // what TryWrite kept goes first
		w.out = w.out[:0]
		if err != nil {
			c.writeFailed(err)
		}
	}
	for !c.writePass(w) {
	}
}

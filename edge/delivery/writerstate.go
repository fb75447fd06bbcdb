package delivery

import "sync/atomic"

// writerState says who may write to a connection's socket, and when. A
// connection has at most one writer at a time: whoever moves the state
// from writerIdle to writerRunning holds it, and makes writer passes
// (writePass, or directPass on a fan-out worker) until one ends with the
// state moved back to writerIdle, or hands it on. Meanwhile a Wake only
// sets writerAgain: each pass begins by storing writerRunning (look),
// which takes in every Wake so far, and ends with rest, which fails if a
// Wake came since, so that the holder makes another pass instead of
// going idle with work left. Who takes the writer, and how it moves:
//
//   - Wake (the store's notifier, a presence watcher, a grant's end, a
//     journal ack, a view's ticker, a close; any goroutine) queues the
//     connection on its fan-out worker (fan), which makes a direct pass
//     with writes that never block (fanout.go); a connection that cannot
//     write so (TLS) has no worker, and Wake starts a writer goroutine
//     (writeLoop) instead;
//   - the reader, after handling what it read (WakeIfDue, for the work
//     MarkWakeDue noted), makes one pass itself, and starts a writer
//     goroutine if that pass does not finish the work;
//   - a fan-out worker whose pass cannot go on without blocking (a full
//     socket, replies or a close to send, a catch-up, a view, a prefix)
//     hands the writer, with its output not yet written, to a writer
//     goroutine (writeLoopFrom): the state stays writerRunning, held by
//     the goroutine now;
//   - once closed is set, the next pass sends the close frame (finish)
//     and stops the writer for good (writerStopped): no writer starts
//     again, and done is closed, which the reader waits for before it
//     drops the socket.
//
// The transitions, and who may make each, are tested one by one in
// writerstate_test.go.
type writerState struct {
	state atomic.Int32
	done  chan struct{} // closed by stop, once the writer has stopped for good
}

// The states of writerState.
const (
	writerIdle    = iota // nobody holds the writer
	writerRunning        // a writer holds it: the reader, a fan-out worker or a writer goroutine
	writerAgain          // held, and woken since its pass began: another pass follows
	writerStopped        // the connection is closed; no writer will start
)

// newWriterState returns an idle writer.
func newWriterState() writerState { return writerState{done: make(chan struct{})} }

// wake is Wake's move: it reports whether the caller took an idle writer
// (and must have a pass made), else makes the holder look for work
// again. It never blocks.
func (w *writerState) wake() bool {
	for {
		switch w.state.Load() {
		case writerIdle:
			if w.state.CompareAndSwap(writerIdle, writerRunning) {
				return true
			}
		case writerRunning:
			if w.state.CompareAndSwap(writerRunning, writerAgain) {
				return false
			}
		default:
			return false
		}
	}
}

// take takes the writer if it is idle, and reports whether it did.
func (w *writerState) take() bool { return w.state.CompareAndSwap(writerIdle, writerRunning) }

// look begins a pass of the writer's holder: a Wake from now on asks for
// another pass.
func (w *writerState) look() { w.state.Store(writerRunning) }

// rest ends a pass that found no more work: the writer goes idle, unless
// a Wake came since the pass began (then it reports false: the holder
// makes another pass).
func (w *writerState) rest() bool { return w.state.CompareAndSwap(writerRunning, writerIdle) }

// stop stops the writer for good, once the close frame is sent. Only the
// holder calls it and no writer starts once stopped: it runs once.
func (w *writerState) stop() {
	w.state.Store(writerStopped)
	close(w.done)
}

// stopped is closed once the writer has stopped for good.
func (w *writerState) stopped() <-chan struct{} { return w.done }

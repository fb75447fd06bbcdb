package client

import (
	"sync"
	"sync/atomic"
)

// maxKeptWriteBuffer is the largest encode buffer a connection keeps
// between writes; a rare huge message does not pin its memory forever.
const maxKeptWriteBuffer = 64 << 10

// outbox is a connection's outgoing queue, and alone owns it: messages
// encoded back to back, written by whichever sender finds nobody writing,
// and again for as long as others queued more meanwhile, so that
// concurrent requests share one write. While the reader is corked, what
// is queued waits for a flusher goroutine that the outbox starts at
// uncork and awaits in wait.
type outbox struct {
	// write sends messages in one transport write; on an error it has
	// ended the connection. Set at construction.
	write func(msgs [][]byte) error

	// mu guards the queue: out holds the messages, each ending at the
	// offset in ends. push holds it while admit runs (which takes the
	// connection's mu): order outbox.mu, then conn.mu.
	mu        sync.Mutex
	out       []byte
	ends      []int
	writing   bool     // a sender or the flusher is writing the queue
	spareOut  []byte   // the other queue, swapped in while writing
	spareEnds []int    //
	msgs      [][]byte // the writer's
	// corked is set while the reader handles frames (set without mu,
	// cleared under it): messages queued meanwhile, typically by reply
	// callbacks running on the reader, are not written by their sender
	// but by a flusher goroutine started at uncork, once the reader has
	// handled every frame it already received. So the requests that the
	// replies of one read set off leave in one write, and the reader
	// never writes itself: it could block there while the edge blocks
	// writing to it.
	corked   atomic.Bool
	flushers sync.WaitGroup
}

// push queues one message and writes the queue, unless another sender is
// writing it (that one takes the message along) or the reader is corked
// (its flusher will). encode appends the message to dst. admit, when not
// nil, then decides under the queue's lock whether the message goes out
// (a call registers itself there, so its reply cannot come first): on an
// error the message is taken off the queue again, never to be sent. With
// queued false, err is encode's or admit's; with queued true, it is the
// failed write's (which has ended the connection).
func (o *outbox) push(encode func(dst []byte) ([]byte, error), admit func() error) (queued bool, err error) {
	o.mu.Lock()
	out, err := encode(o.out)
	if err == nil && admit != nil {
		err = admit()
	}
	if err != nil { // out is dropped: the queue is as it was
		o.mu.Unlock()
		return false, err
	}
	o.out = out
	o.ends = append(o.ends, len(out))
	if o.writing || o.corked.Load() {
		o.mu.Unlock()
		return true, nil
	}
	o.writing = true
	return true, o.writeLocked()
}

// cork holds back the writes of senders until uncork; for the reader.
func (o *outbox) cork() { o.corked.Store(true) }

// uncork ends the reader's cork: what was queued meanwhile is written by
// a flusher goroutine, unless a sender is writing (and takes it along).
func (o *outbox) uncork() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.corked.Store(false)
	if o.writing || len(o.ends) == 0 {
		return
	}
	o.writing = true
	o.flushers.Add(1)
	go func() {
		defer o.flushers.Done()
		o.mu.Lock()
		_ = o.writeLocked() // a failure ends the connection
	}()
}

// wait waits for the flusher goroutines to exit; once the connection has
// ended, so that none starts after.
func (o *outbox) wait() { o.flushers.Wait() }

// writeLocked writes the queue, and again for as long as others queued
// more meanwhile; mu is held, with writing set, and released. After a
// failed write (the connection has ended: a frame may be half sent) the
// queue is dropped.
func (o *outbox) writeLocked() error {
	var err error
	for len(o.ends) > 0 && err == nil {
		out, ends := o.out, o.ends
		o.out, o.ends = o.spareOut[:0], o.spareEnds[:0]
		o.mu.Unlock()
		start := 0
		for _, e := range ends {
			o.msgs = append(o.msgs, out[start:e])
			start = e
		}
		err = o.write(o.msgs)
		clear(o.msgs)
		o.msgs = o.msgs[:0]
		o.mu.Lock()
		o.spareOut, o.spareEnds = nil, ends[:0]
		if cap(out) <= maxKeptWriteBuffer {
			o.spareOut = out[:0]
		}
	}
	if err != nil {
		o.out, o.ends = o.out[:0], o.ends[:0]
	}
	o.writing = false
	o.mu.Unlock()
	return err
}

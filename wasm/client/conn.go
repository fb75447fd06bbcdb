package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// errConnClosed is the cause recorded when the client itself closes a
// connection.
var errConnClosed = errors.New("client: connection closed by the client")

// maxKeptWriteBuffer is the largest encode buffer a connection keeps
// between writes; a rare huge message does not pin its memory forever.
const maxKeptWriteBuffer = 64 << 10

// conn is one authenticated-or-not WebSocket connection: a reader
// goroutine that matches replies to requests by id and hands pushes to the
// client, and a write path serialized by a mutex. A conn is never reused:
// when it ends, the client dials a new one.
type conn struct {
	t     transport
	codec codec.Codec
	log   *Logger
	// pushes receives every PDU without id (subscription data, info and
	// errors), on the reader goroutine.
	pushes pushHandler
	// dd reads data pushes in one pass, if the codec can (nil if not),
	// into data, the reader's.
	dd   codec.DataDecoder
	data codec.Data

	ctx    context.Context // ends with the connection; bounds writes and reads
	cancel context.CancelFunc
	done   chan struct{} // closed once the reader has exited and pending calls failed

	nextID atomic.Int64 // last request id used; ids are never reused on a conn

	route *Subscription // the last subscription a push was routed to; guarded by Client.mu

	// tokenExp is when the token cn authenticated with expires (zero:
	// none, or unknown), and retryAt when to retry a failed refresh (zero:
	// none). Written by whoever authenticates: the dialing goroutine
	// before the supervisor gets cn, then the supervisor alone.
	tokenExp, retryAt time.Time

	mu      sync.Mutex // guards pending and err; a leaf lock
	pending map[int64]*call
	err     error // why the connection ended, set once

	// wmu guards the outgoing queue: requests encoded back to back in
	// out, each ending at the offset in ends. A sender that finds nobody
	// writing writes the queue, and again for as long as others queued
	// more meanwhile, so that concurrent requests share one write. send
	// holds wmu while registering a call under mu: order wmu, then mu.
	wmu       sync.Mutex
	out       []byte
	ends      []int
	writing   bool     // a sender or the flusher is writing the queue
	spareOut  []byte   // the other queue, swapped in while writing
	spareEnds []int    //
	msgs      [][]byte // the writer's
	// corked is set while the reader handles frames (set without wmu,
	// cleared under it): requests queued meanwhile, typically by reply
	// callbacks running on the reader, are not written by their sender
	// but by a flusher goroutine the reader starts once it has handled
	// every frame it already received. So the requests that the replies
	// of one read set off leave in one write, and the reader never writes
	// itself: it could block there while the edge blocks writing to it.
	corked   atomic.Bool
	flushers sync.WaitGroup

	closeOnce sync.Once
}

// call is one request waiting for its reply.
type call struct {
	id     int64
	action string
	// hook, when set, runs on the reader goroutine with an ok or error
	// reply before any later frame is read, so state it sets (a
	// subscription's routing) is in place for the pushes that follow.
	hook func(env rtm.Envelope)
	env  rtm.Envelope // the reply; valid once done is closed and err is nil
	err  error        // why no reply will come
	done chan struct{}
	// reply, when set, replaces done (nil) for a request nobody waits
	// for: it is called once, with env set (its body valid only during
	// the call) or err saying why no reply will come.
	reply func(cl *call)
}

// pushHandler takes the pushes of a conn, on its reader goroutine; size
// is the frame's length.
type pushHandler interface {
	// onData takes a data push read by the codec's DataDecoder. d is the
	// reader's: it is valid only during the call, its messages excepted.
	onData(cn *conn, d *codec.Data, size int)
	// onPush takes every other push.
	onPush(cn *conn, env rtm.Envelope, size int)
}

// newConn starts the reader of a dialed transport.
func newConn(t transport, cd codec.Codec, log *Logger, pushes pushHandler) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	cn := &conn{
		t: t, codec: cd, log: log, pushes: pushes,
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		pending: make(map[int64]*call),
	}
	cn.dd, _ = cd.(codec.DataDecoder)
	go cn.readLoop()
	return cn
}

// readLoop reads frames until the connection fails or is closed. Pushes
// are decoded before the next Read, so their frames are not copied.
func (cn *conn) readLoop() {
	defer close(cn.done)
	for {
		frame, err := cn.t.Read(cn.ctx)
		if err != nil {
			cn.fail(err)
			return
		}
		cn.corked.Store(true)
		cn.handle(frame)
		// Corked only while the next Read cannot wait for the edge: a
		// ping buffered behind a reply would otherwise keep the requests
		// that reply set off unwritten while Read waits for the edge's
		// next message, which never comes if the edge waits for them.
		if !cn.t.MessagePending() {
			cn.uncork()
		}
	}
}

// handle routes one frame, on the reader goroutine.
func (cn *conn) handle(frame []byte) {
	if cn.dd != nil && cn.dd.DecodeData(frame, &cn.data) {
		cn.pushes.onData(cn, &cn.data, len(frame))
		cn.data.Messages = nil // handed over
		return
	}
	env, err := cn.codec.Decode(frame)
	if err != nil {
		cn.log.Warn("sluice client: dropped an undecodable frame", "err", err)
		return
	}
	switch env.ID.Kind {
	case rtm.IDInt:
		cn.complete(env)
	case rtm.IDNone:
		if env.Action == rtm.ActionError {
			cn.logErrorPDU(env)
			return
		}
		cn.pushes.onPush(cn, env, len(frame))
	default:
		cn.log.Debug("sluice client: ignored a reply with a string id", "action", env.Action)
	}
}

// uncork ends the reader's cork: what was queued meanwhile is written by
// a flusher goroutine, unless a sender is writing (and takes it along).
func (cn *conn) uncork() {
	cn.wmu.Lock()
	cn.corked.Store(false)
	if cn.writing || len(cn.ends) == 0 {
		cn.wmu.Unlock()
		return
	}
	cn.writing = true
	cn.flushers.Add(1)
	go func() {
		defer cn.flushers.Done()
		cn.wmu.Lock()
		_ = cn.writeQueueLocked() // a failure ends the connection
	}()
	cn.wmu.Unlock()
}

// logErrorPDU reports the edge's answer to a frame it could not decode:
// a client bug, never expected.
func (cn *conn) logErrorPDU(env rtm.Envelope) {
	var eb rtm.ErrorBody
	_ = cn.codec.DecodeBody(env.Body, &eb)
	cn.log.Error("sluice client: the edge could not decode a frame", "error", eb.Error, "reason", eb.Reason)
}

// complete hands a reply to its call.
func (cn *conn) complete(env rtm.Envelope) {
	cn.mu.Lock()
	cl := cn.pending[env.ID.Int]
	delete(cn.pending, env.ID.Int)
	cn.mu.Unlock()
	if cl == nil {
		cn.log.Debug("sluice client: reply to an abandoned request", "action", env.Action, "id", env.ID.Int)
		return
	}
	if cl.hook != nil {
		cl.hook(env)
	}
	cl.env = env
	cl.finish()
}

// fail ends the connection: it records the cause, fails every pending
// call with ErrDisconnected and stops the reader. Safe to call many times.
func (cn *conn) fail(cause error) {
	cn.mu.Lock()
	if cn.err == nil {
		cn.err = cause
	}
	calls := cn.pending
	cn.pending = nil
	cn.mu.Unlock()
	cn.cancel() // unblocks Read, which closes the WebSocket
	for _, cl := range calls {
		cl.err = disconnected(cause)
		cl.finish()
	}
}

// finish hands a call its outcome, env or err, once set: to its reply
// function, or else to its waiter.
func (cl *call) finish() {
	if cl.reply != nil {
		cl.reply(cl)
		return
	}
	// The waiter decodes the body later; the frame is the transport's,
	// reused by the next Read (a failed call has no body).
	cl.env.Body = bytes.Clone(cl.env.Body)
	close(cl.done)
}

// disconnected wraps the cause of a dropped connection.
func disconnected(cause error) error {
	return fmt.Errorf("%w: %v", ErrDisconnected, cause)
}

// errUnsent marks, for errors.Is, a request refused because its
// connection had already ended: it was never sent, so the client may send
// it on the next connection.
var errUnsent = errors.New("client: request not sent")

// unsentError is ErrDisconnected for a request that was never sent; its
// text is disconnected's.
type unsentError struct{ err error }

func unsent(cause error) error        { return unsentError{disconnected(cause)} }
func (e unsentError) Error() string   { return e.err.Error() }
func (e unsentError) Unwrap() error   { return e.err }
func (e unsentError) Is(t error) bool { return t == errUnsent }

// cause returns why the connection ended, nil while it is up.
func (cn *conn) cause() error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	return cn.err
}

// close closes the connection gracefully (StatusNormalClosure) and waits for
// the reader to exit. Idempotent.
func (cn *conn) close() {
	cn.closeOnce.Do(func() {
		// The handshake waits for the edge's close frame, read by the
		// reader goroutine; the transport bounds it (5s natively).
		_ = cn.t.Close(websocket.StatusNormalClosure, "")
		cn.fail(errConnClosed)
	})
	<-cn.done
	cn.flushers.Wait()
}

// send writes a request with a fresh id and registers it for its reply.
func (cn *conn) send(ctx context.Context, action string, body any, hook func(rtm.Envelope)) (*call, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cl := &call{action: action, hook: hook, done: make(chan struct{})}
	if err := cn.sendCall(cl, body); err != nil {
		return nil, err
	}
	return cl, nil
}

// sendAsync writes a request whose reply goes to reply (see call.reply),
// which is not called when sendAsync returns an error.
func (cn *conn) sendAsync(action string, body any, reply func(*call)) error {
	return cn.sendCall(&call{action: action, reply: reply}, body)
}

// sendCall gives a call a fresh id, queues its request and registers it.
// Whether the connection has ended is checked once, as the call is
// registered: a request for an ended connection is taken off the queue
// and never sent.
func (cn *conn) sendCall(cl *call, body any) error {
	cn.wmu.Lock()
	cl.id = cn.nextID.Add(1)
	n, k := len(cn.out), len(cn.ends)
	if err := cn.appendLocked(&rtm.PDU{Action: cl.action, ID: rtm.IntID(cl.id), Body: body}); err != nil {
		cn.wmu.Unlock()
		return err
	}
	cn.mu.Lock()
	if err := cn.err; err != nil {
		cn.mu.Unlock()
		// Off the queue, so that no writer still running sends it: the
		// caller may send it on the next connection.
		cn.out, cn.ends = cn.out[:n], cn.ends[:k]
		cn.wmu.Unlock()
		return unsent(err)
	}
	cn.pending[cl.id] = cl
	cn.mu.Unlock()
	// A failed write fails the registered call: its waiter, or its reply
	// function, hears why.
	_ = cn.flushLocked()
	return nil
}

// sendNoReply writes a request without id: the edge never answers it.
func (cn *conn) sendNoReply(action string, body any) error {
	if err := cn.cause(); err != nil {
		return disconnected(err)
	}
	cn.wmu.Lock()
	if err := cn.appendLocked(&rtm.PDU{Action: action, Body: body}); err != nil {
		cn.wmu.Unlock()
		return err
	}
	return cn.flushLocked()
}

// appendLocked encodes a request onto the outgoing queue; wmu is held.
// On an error the queue is as it was.
func (cn *conn) appendLocked(pdu *rtm.PDU) error {
	n := len(cn.out)
	out, err := cn.codec.AppendPDU(cn.out, pdu)
	if err != nil {
		cn.out = cn.out[:n]
		return fmt.Errorf("client: encode %s: %w", pdu.Action, err)
	}
	cn.out = out
	cn.ends = append(cn.ends, len(out))
	return nil
}

// flushLocked writes the queue unless another sender is writing it (that
// one takes this request along) or the reader is corked (its flusher
// will); it releases wmu.
func (cn *conn) flushLocked() error {
	if cn.writing || cn.corked.Load() {
		cn.wmu.Unlock()
		return nil
	}
	cn.writing = true
	return cn.writeQueueLocked()
}

// writeQueueLocked writes the queue, and again for as long as others
// queued more meanwhile; wmu is held, with writing set, and released. A
// failed write ends the connection (the client reconnects), since a frame
// may be half sent: every call waiting for a reply then fails with it.
func (cn *conn) writeQueueLocked() error {
	var err error
	for len(cn.ends) > 0 && err == nil {
		out, ends := cn.out, cn.ends
		cn.out, cn.ends = cn.spareOut[:0], cn.spareEnds[:0]
		cn.wmu.Unlock()
		start := 0
		for _, e := range ends {
			cn.msgs = append(cn.msgs, out[start:e])
			start = e
		}
		err = cn.write(cn.msgs)
		clear(cn.msgs)
		cn.msgs = cn.msgs[:0]
		cn.wmu.Lock()
		cn.spareOut, cn.spareEnds = nil, ends[:0]
		if cap(out) <= maxKeptWriteBuffer {
			cn.spareOut = out[:0]
		}
	}
	if err != nil {
		cn.out, cn.ends = cn.out[:0], cn.ends[:0]
	}
	cn.writing = false
	cn.wmu.Unlock()
	return err
}

// write sends messages in one transport write. The transport bounds it
// by writeTimeout (natively a socket deadline, set once per tenth of it),
// so a write costs no timer of its own.
func (cn *conn) write(msgs [][]byte) error {
	if err := cn.t.Write(cn.ctx, cn.codec.Binary(), msgs); err != nil {
		cn.fail(err)
		return disconnected(err)
	}
	return nil
}

// wait waits for a call's reply and decodes an ok body into out (nil to
// skip). An error reply is returned as *rtm.Error. When ctx ends first, a
// call without hook is forgotten (its reply will be dropped); a call with
// a hook stays registered so the hook still runs, and its owner deals with
// the abandonment.
func (cn *conn) wait(ctx context.Context, cl *call, out any) error {
	select {
	case <-cl.done:
	case <-ctx.Done():
		if cl.hook != nil || cn.forget(cl.id) {
			return ctx.Err()
		}
		<-cl.done // the reply won the race
	}
	if cl.err != nil {
		return cl.err
	}
	return cn.decodeReply(cl, out)
}

// forget unregisters a call; false if its reply already came.
func (cn *conn) forget(id int64) bool {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if _, ok := cn.pending[id]; !ok {
		return false
	}
	delete(cn.pending, id)
	return true
}

// decodeReply checks a reply's action and decodes its body.
func (cn *conn) decodeReply(cl *call, out any) error {
	switch cl.env.Action {
	case rtm.Reply(cl.action, rtm.OutcomeOK):
		if out == nil {
			return nil
		}
		if err := cn.codec.DecodeBody(cl.env.Body, out); err != nil {
			return fmt.Errorf("client: decode %s reply: %w", cl.action, err)
		}
		return nil
	case rtm.Reply(cl.action, rtm.OutcomeError):
		return cn.decodeError(cl.env.Body)
	}
	return fmt.Errorf("%w: %q to %s", ErrUnexpectedReply, cl.env.Action, cl.action)
}

// decodeError turns an error body into an *rtm.Error.
func (cn *conn) decodeError(body []byte) error {
	var eb rtm.ErrorBody
	if err := cn.codec.DecodeBody(body, &eb); err != nil {
		return fmt.Errorf("client: decode error reply: %w", err)
	}
	return &rtm.Error{Code: rtm.Code(eb.Error), Reason: eb.Reason, Position: eb.Position, SubscriptionID: eb.SubscriptionID}
}

// request sends a request and waits for its reply.
func (cn *conn) request(ctx context.Context, action string, body, out any) error {
	cl, err := cn.send(ctx, action, body, nil)
	if err != nil {
		return err
	}
	return cn.wait(ctx, cl, out)
}

// ping checks the connection, ending it when the edge does not answer.
func (cn *conn) ping(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(cn.ctx, timeout)
	defer cancel()
	if err := cn.t.Ping(ctx); err != nil && cn.ctx.Err() == nil {
		cn.fail(fmt.Errorf("ping: %w", err))
	}
}

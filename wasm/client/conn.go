package client

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
	"github.com/sluicehq/sluice/wasm/internal/errtext"
)

// errConnClosed is the cause recorded when the client itself closes a
// connection.
var errConnClosed = errors.New("client: connection closed by the client")

// conn is one authenticated-or-not WebSocket connection: a reader
// goroutine that matches replies to requests by id and hands pushes to
// the client, and an outbox that queues and writes requests. A conn is
// never reused: when it ends, the client dials a new one.
type conn struct {
	t     transport
	codec codec.Codec
	log   *Logger
	// pushes receives every PDU without id (subscription data, info and
	// errors), on the reader goroutine: onData takes a data push read by
	// dd, onPush every other. The client itself, not an interface: a
	// *Client stored in an interface makes the linker keep every method,
	// of the types its fields reach, that an interface call could name
	// (Subscription.Err, Duration.String, ...): 580 bytes of sluice.wasm
	// gzipped.
	pushes *Client
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

	box outbox // the outgoing queue; send registers a call under box.mu and mu, in that order

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

// newConn starts the reader of a dialed transport.
func newConn(t transport, cd codec.Codec, log *Logger, pushes *Client) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	cn := &conn{
		t: t, codec: cd, log: log, pushes: pushes,
		ctx: ctx, cancel: cancel, done: make(chan struct{}),
		pending: make(map[int64]*call),
	}
	cn.dd, _ = cd.(codec.DataDecoder)
	cn.box.write = cn.write
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
		cn.box.cork()
		cn.handle(frame)
		// Corked only while the next Read cannot wait for the edge: a
		// ping buffered behind a reply would otherwise keep the requests
		// that reply set off unwritten while Read waits for the edge's
		// next message, which never comes if the edge waits for them.
		if !cn.t.MessagePending() {
			cn.box.uncork()
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
	return errtext.Kind(ErrDisconnected, errtext.Text(cause))
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
	cn.box.wait()
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
	encode := func(dst []byte) ([]byte, error) {
		cl.id = cn.nextID.Add(1) // under box.mu: ids increase in queue order
		return cn.encode(dst, &rtm.PDU{Action: cl.action, ID: rtm.IntID(cl.id), Body: body})
	}
	// A failed write fails the registered call: its waiter, or its reply
	// function, hears why.
	if queued, err := cn.box.push(encode, func() error { return cn.register(cl) }); !queued {
		return err
	}
	return nil
}

// register records a call, to be matched with its reply, unless the
// connection has ended: then the call is unsent.
func (cn *conn) register(cl *call) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil {
		return unsent(cn.err)
	}
	cn.pending[cl.id] = cl
	return nil
}

// sendNoReply writes a request without id: the edge never answers it.
func (cn *conn) sendNoReply(action string, body any) error {
	if err := cn.cause(); err != nil {
		return disconnected(err)
	}
	_, err := cn.box.push(func(dst []byte) ([]byte, error) {
		return cn.encode(dst, &rtm.PDU{Action: action, Body: body})
	}, nil)
	return err
}

// encode appends a request to dst.
func (cn *conn) encode(dst []byte, pdu *rtm.PDU) ([]byte, error) {
	out, err := cn.codec.AppendPDU(dst, pdu)
	if err != nil {
		return nil, errtext.Wrap("client: encode "+pdu.Action, err)
	}
	return out, nil
}

// write sends messages in one transport write, for the outbox; a failure
// ends the connection (the client reconnects), since a frame may be half
// sent: every call waiting for a reply then fails with it. The transport
// bounds it by writeTimeout (natively a socket deadline, set once per tenth of it),
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
			return errtext.Wrap("client: decode "+cl.action+" reply", err)
		}
		return nil
	case rtm.Reply(cl.action, rtm.OutcomeError):
		return cn.decodeError(cl.env.Body)
	}
	return errtext.Kind(ErrUnexpectedReply, strconv.Quote(cl.env.Action)+" to "+cl.action)
}

// decodeError turns an error body into an *rtm.Error.
func (cn *conn) decodeError(body []byte) error {
	var eb rtm.ErrorBody
	if err := cn.codec.DecodeBody(body, &eb); err != nil {
		return errtext.Wrap("client: decode error reply", err)
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
		cn.fail(errtext.Wrap("ping", err))
	}
}

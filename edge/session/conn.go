package session

import (
	"context"
	"errors"
	"github.com/sluicehq/sluice/edge/peerlimit"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/membership"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// readOverhead is what a publish frame may carry beyond its message (action,
// id, channel name, map headers): frames up to twice the app's largest
// message plus this are read and refused with message_too_large if the
// message itself is too large; larger frames close the connection (1009).
const readOverhead = 16 << 10

// Session is one client connection's session. Its reader goroutine
// (Run) owns the request state (requestState); its delivery side
// (delivery.Conn, embedded) is the socket, the outbox, the live
// subscriptions and the writer, which the delivery engine runs.
type Session struct {
	delivery.Conn

	edge *Edge
	app  *App
	peer string // the remote address without port: the key of per-address limits

	// The reader goroutine's alone (set before the connection runs,
	// then only by the reader): embedded, so its fields read as the
	// connection's.
	requestState

	pinger pinger
	grant  grantTimer // ends a JWT grant at its exp

	// acks orders the replies of publishes waiting for the journal.
	acks acks

	pres membership.Presence // the user id and the channels it is present in (edge/membership)
}

// requestState is the state of a connection's requests, which only its
// reader goroutine reads and writes (New sets it before the reader
// starts): who the client is allowed to be, its rate limit, the reader's
// buffers and reused PDUs. The writer never touches it.
type requestState struct {
	access    // who the client is allowed to be
	handshake auth.Handshake
	limiter   *bucket
	buffers   // the reader's
	// authFailures counts failed authentications; at the limit the
	// connection closes, once closeAfter is queued after the last reply.
	// closing says the reader handles no more requests.
	authFailures int
	closeAfter   closeAfter
	closing      bool
	// pubHandles caches the store handles of the channels this connection
	// publishes to (nil until it publishes), so that a publish does not
	// build a store key and look the channel up by name.
	pubHandles map[string]chanlog.Channel
	// ack and replyPDU are the body of a publish acknowledgment and the
	// PDU of an ok reply, reused: reply encodes them before the reader
	// reads the next request, so one of each serves every request.
	ack      rtm.PositionBody
	replyPDU rtm.PDU
}

// New returns the session of the connection ws of app a, from remote,
// with id; Connect then applies what the app's connect hook answered,
// and Run serves it.
func New(e *Edge, a *App, ws *websocket.Conn, remote, id string) *Session {
	c := &Session{
		edge: e,
		app:  a,
		peer: peerlimit.Peer(remote),
		requestState: requestState{
			access:  access{role: app.DefaultRole, perms: a.DefaultPermissions()},
			limiter: newBucket(e.Limits.RequestsPerSecond, e.Limits.RequestBurst),
		},
	}
	c.Init(e.Engine, ws, id, remote, a.Traffic, c)
	c.pres.Init(&c.Conn, e.Presence, a.App, a.Hooks.Events(), e.Limits.QueueBytes, e.Logger)
	c.acks.cond.L = &c.acks.mu
	ws.SetWriteTimeout(e.Limits.WriteTimeout)
	return c
}

// Unblock implements delivery.Owner: it wakes the reader if it waits in
// pushAck or drainAcks.
func (c *Session) Unblock() { c.wakeAcks() }

// Ended implements delivery.Owner: the connection's presence follows its
// live subscriptions.
func (c *Session) Ended() { c.pres.Sync() }

// readBufKeep is the largest read buffer kept between messages; a larger
// one, grown for a large message, is dropped so idle connections stay small.
const readBufKeep = 4 << 10

// Run serves the connection until it ends, and then posts its
// disconnect event: it reads and handles requests on the calling
// goroutine; writers come and go beside it.
func (c *Session) Run() {
	c.WS().SetReadLimit(int64(2*c.app.MaxMessage() + readOverhead))
	c.pinger.start(c)
	for {
		op, frame, err := c.WS().ReadMessage(c.readBuf)
		c.readBuf = frame[:0]
		if err != nil {
			c.CloseWith(readCloseCode(err))
			c.logClose(err)
			break
		}
		if c.Context().Err() != nil || c.closing {
			// Closing: read on until the peer answers the close frame, so
			// that unread data does not turn the close into a reset.
			continue
		}
		c.edge.Counters.BytesIn[c.CodecIndex()].Add(uint64(len(frame)))
		c.Traffic().BytesIn.Add(uint64(len(frame)))
		if op != c.Op() {
			c.wrongFrameType(op)
		} else {
			c.handleFrame(frame)
		}
		// The replies wait for the next request only if one is already
		// arriving: behind a ping alone, ReadMessage would wait for the
		// client, which may be waiting for them.
		if !c.WS().MessagePending() {
			c.WakeIfDue()
		}
		if cap(c.readBuf) > readBufKeep {
			c.readBuf = nil
		}
	}
	c.pinger.stop()
	c.pres.Leave() // its channels see it leave now, not once the writer is done
	c.stopGrant()
	c.End()
	c.disconnected()
}

// access is the role a connection acts as, what it may do, and until
// when.
type access struct {
	role     string
	perms    app.Permissions
	grantEnd time.Time // when a JWT grant expires; zero: no expiry
}

// buffers are the reader's: the frame it reads, the payload it encodes,
// and the previous message of a request with read (rtmopts.go).
type buffers struct {
	readBuf []byte
	scratch []byte
	prevBuf []byte
}

// closeAfter is a close the reader queues once the replies queued so far
// have been written (closeAfterReplies); code 0: none.
type closeAfter struct {
	code   websocket.StatusCode
	reason string
}

func (c *Session) logClose(err error) {
	code, reason := c.CloseStatus()
	peer := websocket.CloseStatus(err)
	c.edge.Logger.Info("connection closed", "remote", c.Remote(), "appkey", c.app.Key,
		"codec", c.Codec().Name(), "code", int(code), "reason", reason, "peer_code", int(peer),
		"read_error", errorKind(err))
}

// readCloseCode is the close code (and reason) of a connection whose read
// failed with err, unless the edge had chosen one already: the peer's
// close was answered (1000 here; the log gives the peer's code), a
// protocol error was sent with its own, and a peer gone without a close
// frame (it vanished, reset the connection, or cut a frame off) gets
// 1006, which is never sent: there is nobody to send it to.
func readCloseCode(err error) (websocket.StatusCode, string) {
	var pe *websocket.ProtocolError
	switch {
	case errors.As(err, &pe):
		return pe.Code, pe.Reason // the close frame saying so has been sent already
	case websocket.CloseStatus(err) != -1:
		return websocket.StatusNormalClosure, ""
	}
	return websocket.StatusAbnormalClosure, ""
}

// errorKind summarises a read error for logs without quoting client data:
// what ended the connection, in a few fixed words where it is known.
func errorKind(err error) string {
	var pe *websocket.ProtocolError
	switch {
	case err == nil:
		return ""
	case websocket.CloseStatus(err) != -1:
		return "peer closed"
	case errors.As(err, &pe):
		return "protocol error"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "eof mid-frame"
	case errors.Is(err, io.EOF):
		return "eof without close frame"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	case errors.Is(err, net.ErrClosed):
		return "closed by the edge"
	}
	return err.Error()
}

// AppKey is the appkey of the connection's app.
func (c *Session) AppKey() string { return c.app.Key }

// UserID is the connection's user: what its JWT's sub or its connect
// hook named; "" for anonymous.
func (c *Session) UserID() string { return c.pres.User() }

// Backlog reports the bytes of the replies the connection's outbox holds
// and how many times its reader has waited for the writer to take them
// (acks.go, pushAck): what the tests of the reader's back-pressure look
// at.
func (c *Session) Backlog() (bytes, waits int) {
	c.acks.mu.Lock()
	waits = c.acks.roomWaits
	c.acks.mu.Unlock()
	return c.QueuedBytes(), waits
}

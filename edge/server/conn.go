package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/delivery"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/membership"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// readOverhead is what a publish frame may carry beyond its message (action,
// id, channel name, map headers): frames up to twice the app's largest
// message plus this are read and refused with message_too_large if the
// message itself is too large; larger frames close the connection (1009).
const readOverhead = 16 << 10

// conn is one client connection: its session, whose reader goroutine
// owns the request state (requestState), and its delivery side
// (delivery.Conn, embedded: the socket, the outbox, the live
// subscriptions and the writer).
type conn struct {
	delivery.Conn

	srv   *Server
	app   *app.App
	peer  string          // the remote address without port: the key of per-address limits
	hooks *hook.Hooks     // the app's, nil without: no map lookup per request (hooks.go)
	occ   *hook.Occupancy // the app's, nil without events

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
// reader goroutine reads and writes (accept sets it before the reader
// starts): who the client is allowed to be, its rate limit, the reader's
// buffers and reused PDUs. The writer never touches it.
type requestState struct {
	role      string
	perms     app.Permissions
	grantEnd  time.Time // when a JWT grant expires; zero: no expiry
	handshake auth.Handshake
	limiter   *bucket
	readBuf   []byte
	scratch   []byte
	prevBuf   []byte // the previous message of a request with read (rtmopts.go); the reader's
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

func newConn(s *Server, a *app.App, ws *websocket.Conn, remote, id string) *conn {
	c := &conn{
		srv:  s,
		app:  a,
		peer: peerKey(remote),
		requestState: requestState{
			role:    app.DefaultRole,
			limiter: newBucket(s.limits.RequestsPerSecond, s.limits.RequestBurst),
		},
	}
	c.Init(s.engine, ws, id, remote, s.traffic[a.Key], c)
	c.pres.Init(&c.Conn, s.presence, a, s.hk.hooks[a.Key].Events(), s.limits.QueueBytes, s.log)
	c.perms = a.DefaultPermissions()
	c.acks.cond.L = &c.acks.mu
	ws.SetWriteTimeout(s.limits.WriteTimeout)
	return c
}

// Unblock implements delivery.Owner: it wakes the reader if it waits in
// pushAck or drainAcks.
func (c *conn) Unblock() { c.wakeAcks() }

// Ended implements delivery.Owner: the connection's presence follows its
// live subscriptions.
func (c *conn) Ended() { c.pres.Sync() }

// readBufKeep is the largest read buffer kept between messages; a larger
// one, grown for a large message, is dropped so idle connections stay small.
const readBufKeep = 4 << 10

// run serves the connection until it ends: it reads and handles requests
// on the calling goroutine; writers come and go beside it.
func (c *conn) run() {
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
		c.srv.counters.BytesIn[c.CodecIndex()].Add(uint64(len(frame)))
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
}

// closeAfter is a close the reader queues once the replies queued so far
// have been written (closeAfterReplies); code 0: none.
type closeAfter struct {
	code   websocket.StatusCode
	reason string
}

func (c *conn) logClose(err error) {
	code, reason := c.CloseStatus()
	peer := websocket.CloseStatus(err)
	c.srv.log.Info("connection closed", "remote", c.Remote(), "appkey", c.app.Key,
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

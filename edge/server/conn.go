package server

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/filter"
	"github.com/sluicehq/sluice/edge/payload"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/tally"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// readOverhead is what a publish frame may carry beyond its message (action,
// id, channel name, map headers): frames up to twice the app's largest
// message plus this are read and refused with message_too_large if the
// message itself is too large; larger frames close the connection (1009).
const readOverhead = 16 << 10

// conn is one client connection. Its reader goroutine owns the request
// state (requestState); the writer, whoever holds it (outbox.go), owns
// the cursors once a subscription is handed over; mu guards what they
// share.
type conn struct {
	srv        *Server
	app        *app.App
	traffic    *tally.App // the app's counters
	ws         *websocket.Conn
	codec      codec.Codec
	codecIndex int // of the connection's codec (edge/payload)
	op         websocket.Opcode
	remote     string
	peer       string   // remote's address without port: the key of per-address limits
	who        identity // set before the connection runs (hooks.go)

	// ctx ends when the connection is to close; the writer then sends the
	// close frame with closeCode and closeReason.
	ctx    context.Context
	cancel context.CancelFunc

	// The reader goroutine's alone (set before the connection runs,
	// then only by the reader): embedded, so its fields read as the
	// connection's.
	requestState

	// mu guards the fields below, and out's queue: a subscription
	// becomes live as its reply is queued (outbox.go).
	mu  sync.Mutex
	out outbox // the writer's queue and state (outbox.go)
	// live holds the live subscriptions (at most the per-connection
	// limit, ids unique) in the order they started: what the writer
	// walks. It is copy-on-write: a change makes a new slice and never
	// touches the old one, so the writer walks its snapshot unlocked.
	live        []*subscription
	closeCode   websocket.StatusCode // set once, by the first closeWith
	closeReason string

	pinger pinger
	grant  grantTimer // ends a JWT grant at its exp

	// acks orders the replies of publishes waiting for the journal.
	acks acks

	pres connPresence // the user id and the channels it is present in
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
	// connection closes, once closeAfter, its close item, is queued after
	// the last reply. closing says the reader handles no more requests.
	authFailures int
	closeAfter   outItem
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

// subscription is one live subscription. After the reader hands it over
// (under mu), only the writer reads its cursor.
type subscription struct {
	id          string
	channel     string
	cursor      *store.Cursor
	catchup     *chanlog.CatchUp // history read from the log before the cursor; the writer's
	fastForward bool
	batch       int           // most messages per data PDU; 0: no limit
	view        *filter.View  // the filter's, or nil
	changes     *valueChanges // only: value_changes, or nil; the writer's
	// Prefix subscriptions (prefix.go): the parent has group; each child
	// has of, its parent; both have named (data PDUs name the channel).
	group    *prefixGroup
	of       *subscription
	named    bool
	presence bool // watches the channel's members (the presence extension)
	// since is the store's clock when the subscription was made: messages
	// stored from then on reach it live, older ones are history
	// (observeFirst).
	since int64
	// vacate uncounts the subscription from its channel's occupancy
	// (edge/hook's Occupancy); nil for an app without events.
	vacate func()
}

// close closes the subscription's cursor and stops its view's ticker.
func (s *subscription) close() {
	s.cursor.Close()
	if s.group != nil {
		s.group.close()
	}
	if s.view != nil {
		s.view.Stop()
		s.view.Leave()
	}
	if s.vacate != nil {
		s.vacate()
	}
}

// position returns where the subscription reads next: for an aggregate
// view with a period under way, the period's first message, since
// nothing of it was sent yet (a subscription resumed there counts it
// again). The writer's, or before the subscription is live.
func (s *subscription) position() rtm.Position {
	if v := s.view; v != nil {
		if from, ok := v.Resume(); ok {
			return from
		}
	}
	if cu := s.catchup; cu != nil {
		return rtm.Position{Epoch: s.cursor.Position().Epoch, Offset: cu.Next()}
	}
	return s.cursor.Position()
}

// outItem is one entry of the writer's queue: an encoded frame, or the end
// of a subscription (with an unsubscribe/ok reply when id is set).
type outItem struct {
	frame []byte
	end   *subscription
	id    rtm.ID
	reply bool
	deny  string // with end: the subscription's grant ended; the reason of its rtm/subscription/error
	// closeCode, when set, closes the connection with closeReason once
	// the items before have been written.
	closeCode   websocket.StatusCode
	closeReason string
}

// subLocked returns the live subscription with id, nil if none; c.mu is
// held.
func (c *conn) subLocked(id string) *subscription {
	for _, s := range c.live {
		if s.id == id {
			return s
		}
	}
	return nil
}

// setSubLocked makes sub the live subscription of its id, replacing any;
// c.mu is held. It makes a new c.live (copy-on-write).
func (c *conn) setSubLocked(sub *subscription) {
	live := make([]*subscription, 0, len(c.live)+1)
	for _, s := range c.live {
		if s.id != sub.id {
			live = append(live, s)
		}
	}
	c.live = append(live, sub)
}

// dropSubLocked ends the live subscription sub and reports whether it was
// live; c.mu is held. It makes a new c.live (copy-on-write).
func (c *conn) dropSubLocked(sub *subscription) bool {
	i := slices.Index(c.live, sub)
	if i < 0 {
		return false
	}
	live := make([]*subscription, 0, len(c.live)-1)
	live = append(live, c.live[:i]...)
	c.live = append(live, c.live[i+1:]...)
	return true
}

func newConn(s *Server, a *app.App, ws *websocket.Conn, remote string) *conn {
	cd, ci := payload.CodecFor(ws.Subprotocol())
	c := &conn{
		srv:        s,
		app:        a,
		traffic:    s.traffic[a.Key],
		ws:         ws,
		codec:      cd,
		codecIndex: ci,
		op:         websocket.OpText,
		remote:     remote,
		peer:       peerKey(remote),
		requestState: requestState{
			role:    app.DefaultRole,
			limiter: newBucket(s.limits.RequestsPerSecond, s.limits.RequestBurst),
		},
		out: outbox{limit: s.limits.QueueBytes, writer: newWriterState()},
	}
	if cd.Binary() {
		c.op = websocket.OpBinary
	}
	if ws.CanTryWrite() {
		c.out.fan = s.fan.worker()
	}
	c.perms = a.DefaultPermissions()
	c.acks.cond.L = &c.acks.mu
	c.ctx, c.cancel = context.WithCancel(context.Background())
	ws.SetWriteTimeout(s.limits.WriteTimeout)
	return c
}

// readBufKeep is the largest read buffer kept between messages; a larger
// one, grown for a large message, is dropped so idle connections stay small.
const readBufKeep = 4 << 10

// run serves the connection until it ends: it reads and handles requests
// on the calling goroutine; writers come and go beside it.
func (c *conn) run() {
	c.ws.SetReadLimit(int64(2*c.app.MaxMessage() + readOverhead))
	c.pinger.start(c)
	for {
		op, frame, err := c.ws.ReadMessage(c.readBuf)
		c.readBuf = frame[:0]
		if err != nil {
			c.closeWith(readCloseCode(err))
			c.logClose(err)
			break
		}
		if c.ctx.Err() != nil || c.closing {
			// Closing: read on until the peer answers the close frame, so
			// that unread data does not turn the close into a reset.
			continue
		}
		c.srv.counters.BytesIn[c.codecIndex].Add(uint64(len(frame)))
		c.traffic.BytesIn.Add(uint64(len(frame)))
		if op != c.op {
			c.wrongFrameType(op)
		} else {
			c.handleFrame(frame)
		}
		// The replies wait for the next request only if one is already
		// arriving: behind a ping alone, ReadMessage would wait for the
		// client, which may be waiting for them.
		if !c.ws.MessagePending() {
			c.wakeIfDue()
		}
		if cap(c.readBuf) > readBufKeep {
			c.readBuf = nil
		}
	}
	c.pinger.stop()
	c.leavePresence() // its channels see it leave now, not once the writer is done
	c.stopGrant()
	<-c.out.writer.stopped()
	c.ws.CloseNow()
	c.mu.Lock()
	for _, sub := range c.live {
		sub.close()
		c.srv.counters.Subscriptions.Add(-1)
	}
	c.live = nil
	c.out.discardLocked()
	c.mu.Unlock()
}

// closeWith asks the writer to close the connection with code and reason;
// the first call decides them. It does not block.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closeCode == 0 {
		c.closeCode, c.closeReason = code, reason
	}
	c.mu.Unlock()
	c.out.closed.Store(true)
	c.cancel()
	c.wakeAcks()
	c.Wake() // the writer sends the close frame
}

// abort drops the connection at once, without a close handshake.
func (c *conn) abort() {
	c.out.closed.Store(true)
	c.cancel()
	c.wakeAcks()
	c.ws.CloseNow()
	c.Wake()
}

func (c *conn) logClose(err error) {
	c.mu.Lock()
	code, reason := c.closeCode, c.closeReason
	c.mu.Unlock()
	peer := websocket.CloseStatus(err)
	c.srv.log.Info("connection closed", "remote", c.remote, "appkey", c.app.Key,
		"codec", c.codec.Name(), "code", int(code), "reason", reason, "peer_code", int(peer),
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

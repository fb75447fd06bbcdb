//go:build !js

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/websocket"
)

// fakeEdge stands behind the dialFunc seam: each dial of the client hands
// the test a fakeConn, an in-memory WebSocket whose far end the test
// plays. The client's reconnect, resubscribe, write queue and request
// paths run as they do over a network, while the test chooses every frame
// and every drop, and when a dial gets through (a dial waits until the
// test accepts it, or the client gives up).
type fakeEdge struct {
	conns chan *fakeConn

	mu      sync.Mutex
	refuse  int         // how many of the next dials fail at once
	attempt []time.Time // when each dial came
}

func newFakeEdge() *fakeEdge { return &fakeEdge{conns: make(chan *fakeConn)} }

// dial is the client's dialFunc.
func (e *fakeEdge) dial(ctx context.Context, _ string, _ dialConfig) (transport, error) {
	e.mu.Lock()
	e.attempt = append(e.attempt, time.Now())
	refused := e.refuse > 0
	if refused {
		e.refuse--
	}
	e.mu.Unlock()
	if refused {
		return nil, errors.New("fake dial: refused")
	}
	fc := &fakeConn{
		toClient: make(chan []byte, 64),
		writes:   make(chan [][]byte, 64),
		closed:   make(chan struct{}),
	}
	select {
	case e.conns <- fc:
		return fc, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("fake dial: %w", ctx.Err())
	}
}

// refuseNext makes the next n dials fail, as an edge that is down does.
func (e *fakeEdge) refuseNext(n int) {
	e.mu.Lock()
	e.refuse = n
	e.mu.Unlock()
}

// attempts returns when each dial came, in order.
func (e *fakeEdge) attempts() []time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Time(nil), e.attempt...)
}

// accept lets the client's next dial through and returns its connection.
func (e *fakeEdge) accept(t *testing.T) *fakeConn {
	t.Helper()
	return poll.Recv(t, "the client's dial", e.conns)
}

// fakeConn is one connection of a fakeEdge: a transport to the client,
// and the edge's end for the test.
type fakeConn struct {
	toClient chan []byte   // frames the edge sent, for the client's Read
	writes   chan [][]byte // each Write of the client, its messages copied
	// hold, when set before a Write, makes that Write wait, after its
	// messages reached writes, until hold is closed: a write the network
	// is slow to take.
	mu   sync.Mutex
	hold chan struct{}
	// closeHold, when set, makes the client's Close wait, after it has
	// sent closing, until closeHold is closed: a close handshake that
	// waits for the far end's close frame.
	closeHold chan struct{}
	closing   chan struct{}

	closed chan struct{} // closed by the client's Close or the test's drop
	once   sync.Once
	queued [][]byte // the messages of the last Write not yet taken by next
}

var _ transport = (*fakeConn)(nil)

func (fc *fakeConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case m := <-fc.toClient:
		return m, nil
	case <-fc.closed:
		return nil, io.ErrUnexpectedEOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (fc *fakeConn) MessagePending() bool { return false }

func (fc *fakeConn) Write(ctx context.Context, _ bool, msgs [][]byte) error {
	cp := make([][]byte, len(msgs))
	for i, m := range msgs {
		cp[i] = append([]byte(nil), m...)
	}
	select {
	case <-fc.closed:
		return websocket.ErrClosed
	default:
	}
	fc.writes <- cp
	fc.mu.Lock()
	hold := fc.hold
	fc.hold = nil
	fc.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-fc.closed:
			return websocket.ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (fc *fakeConn) Ping(context.Context) error { return nil }

func (fc *fakeConn) Close(websocket.StatusCode, string) error {
	fc.mu.Lock()
	hold, closing := fc.closeHold, fc.closing
	fc.closeHold, fc.closing = nil, nil
	fc.mu.Unlock()
	if hold != nil {
		close(closing)
		<-hold
	}
	fc.drop()
	return nil
}

func (fc *fakeConn) Subprotocol() string { return "json" }

// drop ends the connection as a network failure does: the client's Read
// fails. Idempotent.
func (fc *fakeConn) drop() { fc.once.Do(func() { close(fc.closed) }) }

// holdNextWrite makes the client's next Write wait until release is
// called.
func (fc *fakeConn) holdNextWrite() (release func()) {
	ch := make(chan struct{})
	fc.mu.Lock()
	fc.hold = ch
	fc.mu.Unlock()
	return func() { close(ch) }
}

// holdClose makes the client's Close of this connection wait until
// release is called (or the test ends); closing is closed once the client
// is in that Close.
func (fc *fakeConn) holdClose(t *testing.T) (closing <-chan struct{}, release func()) {
	hold, ch := make(chan struct{}), make(chan struct{})
	fc.mu.Lock()
	fc.closeHold, fc.closing = hold, ch
	fc.mu.Unlock()
	release = sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the client's Close, which waits for it
	return ch, release
}

// fakeReq is a request the client sent.
type fakeReq struct {
	Action string          `json:"action"`
	ID     *int64          `json:"id"`
	Body   json.RawMessage `json:"body"`
}

// body decodes the request's body into v.
func (r fakeReq) body(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s body %s: %v", r.Action, r.Body, err)
	}
}

// write returns the messages of the client's next Write.
func (fc *fakeConn) write(t *testing.T) [][]byte {
	t.Helper()
	return poll.Recv(t, "a write of the client", fc.writes)
}

// next returns the client's next request, whichever write carried it.
func (fc *fakeConn) next(t *testing.T) fakeReq {
	t.Helper()
	if len(fc.queued) == 0 {
		fc.queued = fc.write(t)
	}
	m := fc.queued[0]
	fc.queued = fc.queued[1:]
	return decodeReq(t, m)
}

// quiet waits, in a synctest bubble, until every goroutine of the
// client waits, and fails t if the client sent anything the test has not
// read: what it would send by then is in writes.
func (fc *fakeConn) quiet(t *testing.T, when string) {
	t.Helper()
	synctest.Wait()
	for _, m := range fc.queued {
		t.Fatalf("%s: the client sent %s", when, m)
	}
	select {
	case w := <-fc.writes:
		t.Fatalf("%s: the client sent %q", when, w)
	default:
	}
}

func decodeReq(t *testing.T, m []byte) fakeReq {
	t.Helper()
	var r fakeReq
	if err := json.Unmarshal(m, &r); err != nil {
		t.Fatalf("the client sent %q: %v", m, err)
	}
	return r
}

// send sends the client a PDU; id nil for a push.
func (fc *fakeConn) send(t *testing.T, action string, id *int64, body any) {
	t.Helper()
	pdu := map[string]any{"action": action, "body": body}
	if id != nil {
		pdu["id"] = *id
	}
	b, err := json.Marshal(pdu)
	if err != nil {
		t.Fatal(err)
	}
	fc.toClient <- b
}

// reply answers r with its action's /ok and body.
func (fc *fakeConn) reply(t *testing.T, r fakeReq, body any) {
	t.Helper()
	fc.send(t, r.Action+"/ok", r.ID, body)
}

// dialFake starts a client on e with the JSON codec, fast reconnects
// unless o sets the backoff, no pings and no logs (o adds to that), and
// accepts its first connection.
func dialFake(t *testing.T, e *fakeEdge, o Options) (*Client, *fakeConn) {
	t.Helper()
	o.AppKey, o.Codec, o.PingInterval = "k", "json", -1
	if o.MinBackoff == 0 {
		o.MinBackoff, o.MaxBackoff = time.Millisecond, 2*time.Millisecond
	}
	o.Logger = slog.New(slog.DiscardHandler)
	opts, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cd, err := codecByName("json")
	if err != nil {
		t.Fatal(err)
	}
	c := newClient("ws://fake/v2?appkey=k", opts, cd, e.dial)
	started := make(chan error, 1)
	go func() { started <- c.start(context.Background()) }()
	fc := e.accept(t)
	if err := <-started; err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, fc
}

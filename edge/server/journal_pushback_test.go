//go:build unix

package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// A client that publishes on a durable edge and does not read its
// replies is pushed back on, as on an edge alone (whose reader writes the
// replies itself, and so waits for the client): the edge stops reading
// its requests while the journal's replies fill the connection's outbox
// (Limits.QueueBytes), rather than queueing one per publish until the
// write timeout drops the client. Once the client reads, every publish it
// sent is answered, in order.
func TestJournalRepliesPushBack(t *testing.T) {
	t.Parallel()
	const (
		queueBytes = 4 << 10
		// n publishes' replies are far more than the queue, the writer's
		// buffer and the sockets' (small) buffers hold.
		n = 5000
		// maxReply bounds the frame of one publish's reply.
		maxReply = 128
	)
	e := startJournalEdgeServed(t, startNode(t), nil, func(o *server.Options) {
		o.Limits.QueueBytes = queueBytes
		o.Limits.RequestsPerSecond = 1 << 20
		o.Limits.WriteTimeout = time.Minute // the client reads again only after the check
	}, &servertest.Options{Listener: servertest.SendBuffer(8 << 10)})
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait) // after the client's socket is closed, which ends a blocked write
	c := dialSmallWindow(t, e)
	sent := make(chan error, 1)
	wg.Go(func() { sent <- publishN(c.ws, n) })

	// answered is how many publishes the journal has answered so far.
	answered := func() uint64 {
		var sum uint64
		for _, v := range e.srv.Stats().MessagesIn {
			sum += v
		}
		return sum
	}
	poll.Until(t, "the edge to stop reading the publishes, or to answer all", func() bool {
		_, waits, ok := server.ReplyQueue(e.srv)
		return ok && waits > 0 || answered() == n
	})
	bytes, _, _ := server.ReplyQueue(e.srv)
	if bound := queueBytes + server.MaxInFlight*maxReply; bytes > bound {
		t.Errorf("the edge queued %d bytes of replies for a client that does not read, want at most %d", bytes, bound)
	}
	if got := answered(); got == n {
		t.Errorf("the edge answered all %d publishes of a client that reads none of the replies, want it to stop reading them", got)
	}
	for i := 1; i <= n; i++ {
		p := c.recv()
		if p.Action != "rtm/publish/ok" || p.ID == nil || p.ID.(json.Number).String() != itoa(i) {
			t.Fatalf("reply %d: got %s id %v %v", i, p.Action, p.ID, p.Body)
		}
	}
	if err := poll.Recv(t, "every publish sent", sent); err != nil {
		t.Fatalf("publishing: %v", err)
	}
}

// publishN writes n publishes with ids 1 to n, each with a message of a
// few hundred bytes, waiting as long as the edge does not read them.
func publishN(ws *websocket.Conn, n int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msg := strings.Repeat("x", 500)
	for i := 1; i <= n; i++ {
		frame := fmt.Sprintf(`{"action":"rtm/publish","id":%d,"body":{"channel":"a","message":%q}}`, i, msg)
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
	}
	return nil
}

// A durable edge's publish replies come from the journal, which wakes
// the connection for them, and a fan-out worker writes them with the
// messages of the connection's subscriptions (delivery's directPass): a
// client that publishes to the channel it subscribes to gets every
// reply in request order, at increasing positions, and every message
// once, in order.
func TestJournalRepliesAndDataShareAPass(t *testing.T) {
	t.Parallel()
	e := startJournalEdge(t, startNode(t), nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/subscribe", 0, map[string]any{"channel": "a"})
	const n = 300
	for i := 1; i <= n; i++ {
		c.send("rtm/publish", i, map[string]any{"channel": "a", "message": i})
	}
	replies, msgs := 0, 0
	var last rtm.Position
	for replies < n || msgs < n {
		p := c.recv()
		switch p.Action {
		case "rtm/publish/ok":
			replies++
			if id := p.ID.(json.Number).String(); id != itoa(replies) {
				t.Fatalf("reply %d has id %s", replies, id)
			}
			pos, err := rtm.ParsePosition(p.Body["position"].(string))
			if err != nil || replies > 1 && (pos.Epoch != last.Epoch || pos.Offset <= last.Offset) {
				t.Fatalf("reply %d at %v after %v (%v)", replies, pos, last, err)
			}
			last = pos
		case "rtm/subscription/data":
			for _, m := range p.Body["messages"].([]any) {
				msgs++
				if m.(json.Number).String() != itoa(msgs) {
					t.Fatalf("message %d is %v", msgs, m)
				}
			}
		default:
			t.Fatalf("unexpected %s %v", p.Action, p.Body)
		}
	}
}

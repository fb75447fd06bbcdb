package e2e

// A raw RTM connection for the chaos test (chaos_test.go): JSON PDUs over
// a WebSocket, with nothing hidden. The Go client reconnects, resubscribes
// and fast-forwards by itself; the checker needs every reply and every
// data PDU exactly as the edge sent them, and a connection that simply
// dies with its edge.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/internal/chaos"
	"github.com/sluicehq/sluice/shared/rtm"
)

// errLost is a request's fate when its connection dropped (or its reply
// took too long and the connection was dropped for it): unknown.
var errLost = errors.New("connection lost")

// requestTimeout bounds one request: past the edge's own deadlines for a
// publish across an election (20 s, 30 s for a conditional write).
const requestTimeout = 40 * time.Second

// rtmReply is a reply as the reader got it.
type rtmReply struct {
	action string
	body   json.RawMessage
	at     time.Time
}

// rtmConn is one WebSocket to an edge.
type rtmConn struct {
	ws   *websocket.Conn
	h    *chaos.History
	edge int
	done chan struct{} // closed when the reader has ended

	mu    sync.Mutex // guards the fields below
	next  int64
	calls map[int64]chan rtmReply
	subs  map[string]*chaos.Sub // the live subscriptions by id
	dead  bool
	final bool // closed by the run's end: its subscriptions stay open
}

// dialRTM connects to the chaos app of url.
func dialRTM(ctx context.Context, url string, edge int, h *chaos.History) (*rtmConn, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url+"/v2?appkey=chaos", nil)
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(1 << 24)
	c := &rtmConn{ws: ws, h: h, edge: edge, done: make(chan struct{}),
		calls: map[int64]chan rtmReply{}, subs: map[string]*chaos.Sub{}}
	go c.readLoop()
	return c, nil
}

// close drops the connection and waits for its reader.
func (c *rtmConn) close() {
	c.ws.CloseNow()
	<-c.done
}

func (c *rtmConn) readLoop() {
	defer close(c.done)
	defer c.fail()
	for {
		_, frame, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		at := time.Now()
		var pdu struct {
			Action string          `json:"action"`
			ID     *int64          `json:"id"`
			Body   json.RawMessage `json:"body"`
		}
		if json.Unmarshal(frame, &pdu) != nil {
			return
		}
		if pdu.ID != nil {
			c.answer(*pdu.ID, rtmReply{pdu.Action, pdu.Body, at})
			continue
		}
		c.push(pdu.Action, pdu.Body, at)
	}
}

// answer hands a reply to its request.
func (c *rtmConn) answer(id int64, r rtmReply) {
	c.mu.Lock()
	ch := c.calls[id]
	delete(c.calls, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// push records a subscription's data or end.
func (c *rtmConn) push(action string, body json.RawMessage, at time.Time) {
	var b struct {
		ID       string    `json:"subscription_id"`
		Position string    `json:"position"`
		Messages []*string `json:"messages"`
		Error    string    `json:"error"`
		Info     string    `json:"info"`
	}
	if json.Unmarshal(body, &b) != nil {
		return
	}
	c.mu.Lock()
	s := c.subs[b.ID]
	if action != rtm.ActionSubscriptionData {
		delete(c.subs, b.ID) // an error or a notice: it ends, or is no longer what was asked
	}
	c.mu.Unlock()
	if s == nil {
		return
	}
	switch {
	case b.Error != "" || b.Info != "":
		c.h.Do(func() { s.End, s.EndErr = chaos.SubError, b.Error+b.Info })
	default:
		batch := chaos.Batch{Values: make([]string, len(b.Messages)), Off: c.offset(s.Channel, b.Position, "data"), At: at}
		for i, m := range b.Messages {
			if m != nil {
				batch.Values[i] = *m
			}
		}
		c.h.Do(func() { s.Batches = append(s.Batches, batch) })
	}
}

// offset parses a position of channel the edge sent, 0 for none or
// garbage.
func (c *rtmConn) offset(channel, s, where string) uint64 {
	p, err := rtm.ParsePosition(s)
	if err != nil || p == (rtm.Position{}) {
		return 0 // none, or 0:0: a read of nothing
	}
	return c.h.Offset(channel, p, where)
}

// fail ends every request in flight and every subscription: the
// connection is gone.
func (c *rtmConn) fail() {
	c.mu.Lock()
	c.dead = true
	calls, subs := c.calls, c.subs
	if c.final {
		subs = nil
	}
	c.calls, c.subs = map[int64]chan rtmReply{}, map[string]*chaos.Sub{}
	c.mu.Unlock()
	for _, ch := range calls {
		close(ch)
	}
	c.h.Do(func() {
		for _, s := range subs {
			s.End = chaos.Lost
		}
	})
}

// request sends action with body and waits for the reply; before runs
// just before the frame leaves (it stamps the record's Sent). A lost
// connection, or no reply within requestTimeout, is errLost, and the
// connection is dropped.
func (c *rtmConn) request(action string, body any, before func()) (rtmReply, error) {
	ch := make(chan rtmReply, 1)
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return rtmReply{}, errLost
	}
	c.next++
	id := c.next
	c.calls[id] = ch
	c.mu.Unlock()
	frame, err := json.Marshal(map[string]any{"action": action, "id": id, "body": body})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	before()
	if err := c.ws.Write(ctx, websocket.MessageText, frame); err != nil {
		c.ws.CloseNow()
		return rtmReply{}, errLost
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return rtmReply{}, errLost
		}
		return r, nil
	case <-ctx.Done():
		c.ws.CloseNow()
		return rtmReply{}, errLost
	}
}

// errorCode returns the error code of a reply, "" for an ok.
func errorCode(r rtmReply) string {
	code, _ := replyError(r)
	return code
}

// replyError returns the error code and reason of a reply, "" for an ok.
func replyError(r rtmReply) (code, reason string) {
	var b struct {
		Error  string `json:"error"`
		Reason string `json:"reason"`
	}
	if !strings.HasSuffix(r.action, "/error") {
		return "", ""
	}
	if json.Unmarshal(r.body, &b) != nil || b.Error == "" {
		return "?", string(r.body)
	}
	return b.Error, b.Reason
}

// watch registers s under its id before the subscribe is sent: its data
// may follow the ok reply at once.
func (c *rtmConn) watch(s *chaos.Sub) {
	c.mu.Lock()
	c.subs[s.Name] = s
	c.mu.Unlock()
}

// unwatch forgets the subscription with id name.
func (c *rtmConn) unwatch(name string) {
	c.mu.Lock()
	delete(c.subs, name)
	c.mu.Unlock()
}

// shut closes the connection at the end of the run: its subscriptions
// were live to the end, and owe every message (chaos.Open).
func (c *rtmConn) shut() {
	c.mu.Lock()
	c.final = true
	c.mu.Unlock()
	c.close()
}

// isDead reports whether the connection has dropped.
func (c *rtmConn) isDead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

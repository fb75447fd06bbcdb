package main

import (
	"net/http"
	"slices"
	"sync"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// epoch is the epoch of every position the floor hands out: it keeps no
// history, so it never loses one.
const epoch = 1

// codecs are the floor's codecs, indexed as the frames of a publish are.
var codecs = []codec.Codec{json.Codec{}, msgpack.Codec{}, cbor.Codec{}}

// server is the floor: channels and the connections subscribed to them.
//
// Lock order: server.mu, then channel.mu.
type server struct {
	mu       sync.Mutex
	channels map[string]*channel // guarded by mu
	clients  map[*wsClient]bool  // guarded by mu; closed by close
	closed   bool                // guarded by mu
	wg       sync.WaitGroup      // the connections being served
}

// channel is one channel's subscribers and next offset.
type channel struct {
	mu   sync.Mutex
	next uint64 // guarded by mu: the offset of the next message, from 1
	// subs is replaced, never changed in place, so a publish can send
	// to the slice it read without holding mu.
	subs []sub // guarded by mu
}

// sub is one subscription.
type sub struct {
	c  *wsClient
	id string
}

// wsClient is one connection.
type wsClient struct {
	ws    *websocket.Conn
	codec int // index in codecs
}

func newServer() *server {
	return &server{channels: map[string]*channel{}, clients: map[*wsClient]bool{}}
}

// ServeHTTP answers /healthz and accepts WebSocket connections anywhere
// else, as an edge accepts them at /v2.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.WriteHeader(http.StatusOK)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{"json", "msgpack", "cbor"}, AnyOrigin: true, ReadBufferSize: 4096,
	})
	if err != nil {
		return
	}
	c := &wsClient{ws: ws}
	for i, cd := range codecs {
		if cd.Name() == ws.Subprotocol() {
			c.codec = i
		}
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.CloseNow()
		return
	}
	s.clients[c] = true
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	s.read(c)
}

// close closes every connection and waits until none is served.
func (s *server) close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.clients {
		c.ws.CloseNow()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// read serves one connection until it ends, then drops its
// subscriptions.
func (s *server) read(c *wsClient) {
	var joined []*channel
	var r reader
	for {
		_, msg, err := c.ws.ReadMessage(r.in[:0])
		if err != nil {
			break
		}
		r.in = msg
		if ch := r.handle(s, c); ch != nil {
			joined = append(joined, ch)
		}
	}
	for _, ch := range joined {
		ch.drop(c, "")
	}
	s.mu.Lock()
	delete(s.clients, c)
	s.mu.Unlock()
	c.ws.CloseNow()
}

// channel returns the channel of name, made on first use.
func (s *server) channel(name string) *channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channels[name]
	if ch == nil {
		ch = &channel{next: 1}
		s.channels[name] = ch
	}
	return ch
}

// add subscribes c as id and returns the position it starts at.
func (ch *channel) add(c *wsClient, id string) rtm.Position {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.subs = append(slices.Clip(ch.subs), sub{c, id})
	return rtm.Position{Epoch: epoch, Offset: ch.next}
}

// drop removes c's subscription id ("": all of c's) and returns the
// position it would have read next, and whether it was there.
func (ch *channel) drop(c *wsClient, id string) (rtm.Position, bool) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	n := len(ch.subs)
	ch.subs = slices.DeleteFunc(slices.Clone(ch.subs), func(s sub) bool { return s.c == c && (id == "" || s.id == id) })
	return rtm.Position{Epoch: epoch, Offset: ch.next}, len(ch.subs) < n
}

// take assigns the next offset and returns it with the subscribers.
func (ch *channel) take() (uint64, []sub) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	off := ch.next
	ch.next++
	return off, ch.subs
}

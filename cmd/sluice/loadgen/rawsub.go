package loadgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"unsafe"

	codecjson "github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/fossil"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/shared/websocket"
)

// A raw subscriber (RTM.RawSubscribers) reads its JSON data PDUs itself
// and hands each message's JSON to the check as it came, a delta applied
// to the message before it: the Go client decodes every message into the
// canonical model (maps, for a feed's objects), which for a 2 KiB object
// costs the generator many times the edge's work for the delivery, so
// that the generator, not the edge, saturated the machine. The check
// (parseFeed) compares every byte with the message published.
//
// It is a bench's subscriber only: app key authentication, JSON, one
// subscription, no reconnect (a lost connection is a problem of the run).
// The payload it hands to onMessage is valid during the call only
// (subscriber.deliver keeps nothing of it).

// errRawPublish is a publish on a raw subscriber's connection.
var errRawPublish = errors.New("loadgen: a raw subscriber does not publish")

// maxRawMessage bounds what a delta may make: well above a feed message.
const maxRawMessage = 1 << 20

// maxRawPDU bounds a PDU read, as the client's own limit does: the edge
// sends a subscriber that fell behind many messages in one.
const maxRawPDU = 64 << 20

// rawSub is one raw subscriber's connection.
type rawSub struct {
	ws      *websocket.Conn
	problem func(error)
	delta   bool
	reader  sync.WaitGroup // the reader, once subscribed
	closing sync.Once
	closed  chan struct{} // closed by Close: a read error is then no problem

	// The reader's: the last message (the base of the next delta) and a
	// buffer to make the next one in.
	base, spare []byte
	ends        []int  // of a PDU's messages (dataMessages)
	unq         []byte // a delta unescaped (jsonString)
}

// dialRaw opens a raw subscriber's connection to endpoint.
func (d *RTM) dialRaw(ctx context.Context, endpoint string, problem func(error)) (Conn, error) {
	o := d.Options
	if o.Role != "" || o.Token != "" || !strings.EqualFold(o.Codec, "json") {
		return nil, fmt.Errorf("%w: raw subscribers speak JSON with an app key only", ErrConfig)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("loadgen: raw subscriber URL %q: %w", endpoint, err)
	}
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v2") {
		u.Path = strings.TrimSuffix(u.Path, "/") + "/v2"
	}
	q := u.Query()
	q.Set("appkey", o.AppKey)
	u.RawQuery = q.Encode()
	ws, err := websocket.Dial(ctx, u.String(), &websocket.DialOptions{Subprotocols: []string{"json"}, NetDial: netDial()})
	if err != nil {
		return nil, fmt.Errorf("loadgen: raw subscriber: %w", err)
	}
	ws.SetReadLimit(maxRawPDU)
	return &rawSub{ws: ws, problem: problem, delta: d.Delta, closed: make(chan struct{})}, nil
}

// Subscribe implements Conn: it subscribes, waits for the answer, then
// reads the data on a goroutine of its own until Close.
func (s *rawSub) Subscribe(ctx context.Context, channel string, onMessage func(string)) error {
	body, err := json.Marshal(rtm.SubscribeBody{Channel: channel, Delta: s.delta})
	if err != nil {
		return fmt.Errorf("loadgen: raw subscribe: %w", err)
	}
	pdu := fmt.Sprintf(`{"action":%q,"id":1,"body":%s}`, rtm.ActionSubscribe, body)
	if err := s.ws.Write(s.ws.AppendFrame(nil, websocket.OpText, []byte(pdu))); err != nil {
		return fmt.Errorf("loadgen: raw subscribe: %w", err)
	}
	stop := context.AfterFunc(ctx, s.ws.CloseNow)
	defer stop()
	var frame []byte
	for {
		if _, frame, err = s.ws.ReadMessage(frame); err != nil {
			return fmt.Errorf("loadgen: raw subscribe to %q: %w", channel, err)
		}
		env, err := (codecjson.Codec{}).Decode(frame)
		if err != nil {
			return fmt.Errorf("loadgen: raw subscribe to %q: %w", channel, err)
		}
		if env.ID.Kind != rtm.IDInt || env.ID.Int != 1 {
			continue // a push before the answer
		}
		if env.Action != rtm.ActionSubscribe+"/ok" {
			return fmt.Errorf("%w: raw subscribe to %q: %s %s", ErrRefused, channel, env.Action, env.Body)
		}
		break
	}
	s.reader.Add(1)
	go s.read(onMessage)
	return nil
}

// read hands the messages of the data PDUs to onMessage until the
// connection ends.
func (s *rawSub) read(onMessage func(string)) {
	defer s.reader.Done()
	var frame []byte
	var err error
	for err == nil {
		if _, frame, err = s.ws.ReadMessage(frame); err != nil {
			break
		}
		err = s.push(frame, onMessage)
	}
	select {
	case <-s.closed:
	default:
		s.problem(fmt.Errorf("loadgen: raw subscriber: %w", err))
	}
}

// push handles one PDU.
func (s *rawSub) push(frame []byte, onMessage func(string)) error {
	if body, ok := dataBody(frame); ok {
		return s.data(body, onMessage)
	}
	env, err := (codecjson.Codec{}).Decode(frame)
	if err != nil {
		return err
	}
	switch env.Action {
	case rtm.ActionSubscriptionData:
		return s.data(env.Body, onMessage)
	case rtm.ActionSubscriptionInfo:
		s.base = s.base[:0] // after a fast_forward the next message comes whole
	case rtm.ActionSubscriptionErr:
		return fmt.Errorf("subscription ended: %s", env.Body)
	}
	return nil
}

// data hands the messages of a data PDU's body to onMessage.
func (s *rawSub) data(body []byte, onMessage func(string)) error {
	from, ends, delta, err := dataMessages(body, s.ends[:0])
	s.ends = ends
	if err != nil {
		return fmt.Errorf("data PDU: %w", err)
	}
	for _, end := range ends {
		if err := s.take(body[from:end], delta); err != nil {
			return err
		}
		// Without a copy: the check keeps nothing of the message.
		onMessage(unsafe.String(unsafe.SliceData(s.base), len(s.base)))
		from = end + 1
	}
	return nil
}

// take makes m, a whole message or a delta against the last one, the
// last message.
func (s *rawSub) take(m []byte, delta bool) error {
	if !delta {
		s.base = append(s.base[:0], m...)
		return nil
	}
	d, err := jsonString(&s.unq, m)
	if err != nil {
		return fmt.Errorf("a delta that is not a string: %w", err)
	}
	if len(s.base) == 0 {
		return errors.New("a delta without a message before it")
	}
	next, err := fossil.Apply(s.spare[:0], s.base, d, maxRawMessage)
	if err != nil {
		return fmt.Errorf("a delta that does not apply: %w", err)
	}
	s.base, s.spare = next, s.base
	return nil
}

// Publish implements Conn: a raw subscriber does not publish.
func (s *rawSub) Publish(context.Context, string, string) error { return errRawPublish }

// Close implements Conn.
func (s *rawSub) Close() error {
	s.closing.Do(func() {
		close(s.closed)
		s.ws.CloseNow()
	})
	s.reader.Wait()
	return nil
}

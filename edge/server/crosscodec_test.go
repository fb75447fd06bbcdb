package server_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// codecClient speaks RTM in any codec, through the shared codecs.
type codecClient struct {
	t     testing.TB
	ws    *websocket.Conn
	codec codec.Codec
	next  int64
}

func (e *edge) dialCodec(t testing.TB, c codec.Codec) *codecClient {
	t.Helper()
	return &codecClient{t: t, ws: e.dial(t, "test", c.Name()).ws, codec: c}
}

func (c *codecClient) send(p *rtm.PDU) {
	c.t.Helper()
	frame, err := c.codec.AppendPDU(nil, p)
	if err != nil {
		c.t.Fatalf("%s encode: %v", c.codec.Name(), err)
	}
	typ := frameType(c.codec)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, typ, frame); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func frameType(c codec.Codec) websocket.MessageType {
	if c.Binary() {
		return websocket.MessageBinary
	}
	return websocket.MessageText
}

func (c *codecClient) recv() rtm.Envelope {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	env, err := c.codec.Decode(data)
	if err != nil {
		c.t.Fatalf("%s decode %x: %v", c.codec.Name(), data, err)
	}
	return env
}

// call sends a request and decodes its ok reply into reply.
func (c *codecClient) call(action string, body, reply any) {
	c.t.Helper()
	c.next++
	c.send(&rtm.PDU{Action: action, ID: rtm.IntID(c.next), Body: body})
	env := c.recv()
	if env.Action != action+"/ok" || env.ID != rtm.IntID(c.next) {
		var eb rtm.ErrorBody
		_ = c.codec.DecodeBody(env.Body, &eb)
		c.t.Fatalf("%s over %s: got %s %+v", action, c.codec.Name(), env.Action, eb)
	}
	if reply != nil {
		if err := c.codec.DecodeBody(env.Body, reply); err != nil {
			c.t.Fatalf("decode reply: %v", err)
		}
	}
}

// data reads the next subscription/data PDU.
func (c *codecClient) data() rtm.SubscriptionData {
	c.t.Helper()
	env := c.recv()
	var d rtm.SubscriptionData
	if env.Action != rtm.ActionSubscriptionData {
		c.t.Fatalf("got %s, want data", env.Action)
	}
	if err := c.codec.DecodeBody(env.Body, &d); err != nil {
		c.t.Fatalf("decode data: %v", err)
	}
	return d
}

var allCodecs = []codec.Codec{json.Codec{}, cbor.Codec{}, msgpack.Codec{}}

// TestCrossCodec publishes in every codec and receives in every codec: the
// values are identical, 64-bit integers exact, and binary arrives as base64
// text for JSON subscribers.
func TestCrossCodec(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	values := []any{
		nil, true, false, int64(0), int64(-1), int64(math.MaxInt64), int64(math.MinInt64),
		uint64(math.MaxUint64), 1.5, -2.25e-10, "", "héllo ✓ 日本", []any{int64(1), "two", nil},
		map[string]any{"nested": map[string]any{"a": []any{true, 1.25}}, "k": "v"},
	}
	subs := make([]*codecClient, len(allCodecs))
	for i, c := range allCodecs {
		subs[i] = e.dialCodec(t, c)
		subs[i].call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "x"}, nil)
	}
	for _, pc := range allCodecs {
		pub := e.dialCodec(t, pc)
		for _, v := range values {
			pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "x", Message: v}, nil)
		}
		if pc.Binary() {
			pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "x", Message: []byte{0, 1, 0xfe, 0xff}}, nil)
		}
		for si, sub := range subs {
			want := append([]any{}, values...)
			if pc.Binary() {
				bin := any([]byte{0, 1, 0xfe, 0xff})
				if !allCodecs[si].Binary() {
					bin = "AAH+/w=="
				}
				want = append(want, bin)
			}
			var got []any
			for len(got) < len(want) {
				got = append(got, sub.data().Messages...)
			}
			for i := range want {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("published in %s, received in %s: message %d = %#v, want %#v",
						pc.Name(), allCodecs[si].Name(), i, got[i], want[i])
				}
			}
		}
	}
}

// TestOrdering runs several publishers and subscribers on one channel:
// every subscriber sees the same sequence, and each publisher's messages
// in the order it sent them.
func TestOrdering(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond = 1 << 30 })
	const pubs, subsN, per = 4, 4, 300
	subs := make([]*codecClient, subsN)
	for i := range subs {
		subs[i] = e.dialCodec(t, allCodecs[i%len(allCodecs)])
		subs[i].call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "order"}, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, pubs)
	for p := 0; p < pubs; p++ {
		pc := e.dialCodec(t, allCodecs[p%len(allCodecs)])
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; i++ {
				frame, err := pc.codec.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionPublish,
					Body: &rtm.PublishBody{Channel: "order", Message: fmt.Sprintf("%d/%d", p, i)}})
				if err == nil {
					err = pc.ws.Write(context.Background(), frameType(pc.codec), frame)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("publisher: %v", err)
	}
	var first []any
	for si, sub := range subs {
		var got []any
		for len(got) < pubs*per {
			got = append(got, sub.data().Messages...)
		}
		last := make([]int, pubs)
		for i := range last {
			last[i] = -1
		}
		for _, m := range got {
			var p, i int
			if _, err := fmt.Sscanf(m.(string), "%d/%d", &p, &i); err != nil || i != last[p]+1 {
				t.Fatalf("subscriber %d: %v after %d from publisher %d", si, m, last[p], p)
			}
			last[p] = i
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(first, got) {
			t.Fatalf("subscriber %d saw another sequence than subscriber 0", si)
		}
	}
}

// TestMsgpackKeyTwice sends a msgpack publish whose body names "message"
// twice (a frame that once made the decoding library panic): the edge
// answers invalid_format and the connection stays usable.
func TestMsgpackKeyTwice(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dialCodec(t, msgpack.Codec{})
	// {"action":"rtm/publish","id":1,"body":{"channel":"a","message":1,"message":2}}
	frame := []byte{0x83,
		0xa6, 'a', 'c', 't', 'i', 'o', 'n', 0xab, 'r', 't', 'm', '/', 'p', 'u', 'b', 'l', 'i', 's', 'h',
		0xa2, 'i', 'd', 0x01,
		0xa4, 'b', 'o', 'd', 'y', 0x83,
		0xa7, 'c', 'h', 'a', 'n', 'n', 'e', 'l', 0xa1, 'a',
		0xa7, 'm', 'e', 's', 's', 'a', 'g', 'e', 0x01,
		0xa7, 'm', 'e', 's', 's', 'a', 'g', 'e', 0x02}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageBinary, frame); err != nil {
		t.Fatal(err)
	}
	env := c.recv()
	var eb rtm.ErrorBody
	if env.Action != "rtm/publish/error" || c.codec.DecodeBody(env.Body, &eb) != nil || eb.Error != "invalid_format" {
		t.Fatalf("got %s %+v, want rtm/publish/error invalid_format", env.Action, eb)
	}
	c.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "a", Message: "usable"}, nil)
}

// TestLateCodecReadsHistory publishes while only msgpack clients are
// connected, so the messages are stored in msgpack alone; subscribers in
// JSON and CBOR that connect afterwards and ask for the history get the
// same values as in TestCrossCodec, and the per-codec gauge follows the
// connections.
func TestLateCodecReadsHistory(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	values := []any{
		nil, true, int64(-7), uint64(math.MaxUint64), 2.5, "héllo ✓", []byte{0, 0xff},
		[]any{int64(1), "two"}, map[string]any{"k": map[string]any{"a": []any{false}}},
	}
	pub := e.dialCodec(t, msgpack.Codec{})
	for _, v := range values {
		pub.call(rtm.ActionPublish, &rtm.PublishBody{Channel: "late", Message: v}, nil)
	}
	count := int64(len(values))
	for _, c := range allCodecs {
		sub := e.dialCodec(t, c)
		sub.call(rtm.ActionSubscribe, &rtm.SubscribeBody{Channel: "late", History: &rtm.History{Count: &count}}, nil)
		var got []any
		for len(got) < len(values) {
			got = append(got, sub.data().Messages...)
		}
		for i, v := range values {
			if b, ok := v.([]byte); ok && !c.Binary() {
				v = base64.StdEncoding.EncodeToString(b)
			}
			if !reflect.DeepEqual(got[i], v) {
				t.Errorf("published in msgpack before any %s client, read in %s: message %d = %#v, want %#v",
					c.Name(), c.Name(), i, got[i], v)
			}
		}
	}
	st := e.srv.Stats()
	for i, name := range server.Codecs() {
		want := int64(1) // one subscriber of each codec
		if name == "msgpack" {
			want = 2 // and the publisher
		}
		if st.CodecConnections[i] != want {
			t.Errorf("CodecConnections[%s] = %d, want %d", name, st.CodecConnections[i], want)
		}
	}
}

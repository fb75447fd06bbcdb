package e2e

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	mint := func(c auth.Claims) string {
		t.Helper()
		tok, err := auth.Mint([]byte(jwtSecret), c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	hour := time.Now().Add(time.Hour)
	token := mint(auth.Claims{Role: "publisher", Expires: hour})
	tests := []struct {
		name string
		opts client.Options
		dial rtm.Code // refusal at Dial, "" for none
		pub  rtm.Code // refusal of a publish to "auth.x", "" for none
	}{
		{name: "unknown appkey", opts: client.Options{AppKey: "nope"}, dial: rtm.CodeInvalidAppkey},
		{name: "wrong secret", opts: client.Options{Role: "publisher", RoleSecret: "guess"}, dial: rtm.CodeAuthenticationFailed},
		{name: "unknown role", opts: client.Options{Role: "ghost", RoleSecret: pubSecret}, dial: rtm.CodeAuthenticationFailed},
		{name: "forged jwt", opts: client.Options{Token: token + "x"}, dial: rtm.CodeAuthenticationFailed},
		{name: "expired jwt", opts: client.Options{Token: mint(auth.Claims{Role: "publisher", Expires: time.Now().Add(-time.Minute)})}, dial: rtm.CodeAuthenticationFailed},
		{name: "default role may not publish", opts: client.Options{}, pub: rtm.CodeAuthorizationDenied},
		{name: "role secret", opts: client.Options{Role: "publisher", RoleSecret: pubSecret}},
		{name: "jwt role", opts: client.Options{Token: token}},
		{name: "jwt channel grant", opts: client.Options{Token: mint(auth.Claims{Publish: []string{"auth.*"}, Expires: hour})}},
		{name: "jwt grant elsewhere", opts: client.Options{Token: mint(auth.Claims{Publish: []string{"other"}, Expires: hour})}, pub: rtm.CodeAuthorizationDenied},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			if opts.AppKey == "" {
				opts.AppKey = "e2e"
			}
			opts.Logger = quietLogger()
			c, err := client.Dial(ctxFor(t), e.url, &opts)
			if code := codeOf(err); code != tt.dial {
				t.Fatalf("Dial error %v, want code %q", err, tt.dial)
			}
			if err != nil {
				if re, _ := rtm.AsError(err); re.Reason == "" {
					t.Errorf("refusal %v has no reason", err)
				}
				return
			}
			defer c.Close()
			if c.State() != client.Connected {
				t.Errorf("State() = %v after Dial, want connected", c.State())
			}
			_, err = c.Publish(ctxFor(t), "auth.x", "x")
			if code := codeOf(err); code != tt.pub {
				t.Fatalf("Publish error %v, want code %q", err, tt.pub)
			}
		})
	}
}

func TestDialBadEndpoint(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	// A port nobody listens on: take one, then free it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "ws://" + ln.Addr().String()
	ln.Close()
	tests := []struct {
		name, url string
		is        error  // errors.Is target, nil for none
		says      string // substring of the error
	}{
		{name: "no scheme", url: strings.TrimPrefix(e.url, "ws://"), is: client.ErrURL, says: "bad url"},
		{name: "other scheme", url: "ftp://" + e.hostPort(), is: client.ErrURL, says: "ftp://"},
		{name: "no host", url: "ws:///v2", is: client.ErrURL, says: "no host"},
		{name: "nothing listening", url: closed, says: "dial " + closed + "/v2?appkey=e2e"},
		{name: "not an RTM endpoint", url: e.url + "/v1", is: client.ErrRefused, says: "404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := client.Dial(ctxFor(t), tt.url, &client.Options{AppKey: "e2e", Logger: quietLogger()})
			if err == nil {
				c.Close()
				t.Fatalf("Dial(%q) succeeded", tt.url)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Dial(%q) = %v, want %v", tt.url, err, tt.is)
			}
			if _, isRTM := rtm.AsError(err); isRTM {
				t.Errorf("Dial(%q) = %v: an RTM refusal, want a local or network error", tt.url, err)
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Dial(%q) = %q, want it to say %q", tt.url, err, tt.says)
			}
		})
	}
}

func TestPublishSubscribeEachCodec(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	for _, cd := range []string{"msgpack", "json", "cbor"} {
		t.Run(cd, func(t *testing.T) {
			t.Parallel()
			c := publisher(t, e.url, cd)
			ctx := ctxFor(t)
			channel := "codec." + cd
			var got inbox
			sub, err := c.Subscribe(ctx, channel, nil, got.handle)
			if err != nil {
				t.Fatal(err)
			}
			values := []any{"hello", int64(42), map[string]any{"text": "hi"}, []any{true, nil}, 1.5}
			var first, last rtm.Position
			for i, v := range values {
				if last, err = c.Publish(ctx, channel, v); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = last
				}
			}
			want := []string{"hello", "42", "map[text:hi]", "[true <nil>]", "1.5"}
			got.expect(t, want)
			poll.Until(t, "the position to pass the last message", func() bool { return sub.Position() == last.Next() })
			if m := got.lastMessage(); !m.EndOfBatch || m.Position != last.Next() || m.SubscriptionID != channel {
				t.Errorf("last message %+v, want the end of a batch at %v for %s", m, last.Next(), channel)
			}
			msg, pos, err := c.Read(ctx, channel)
			if err != nil || pos != last || fmt.Sprint(msg) != "1.5" {
				t.Fatalf("Read = %v at %v, %v; want 1.5 at %v", msg, pos, err, last)
			}
			var hist inbox
			if _, err := c.Subscribe(ctx, channel, &client.SubscribeOptions{ID: "from-start", Position: &first}, hist.handle); err != nil {
				t.Fatal(err)
			}
			hist.expect(t, want)
			var count inbox
			if _, err := c.Subscribe(ctx, channel, &client.SubscribeOptions{ID: "last-two", HistoryCount: 2}, count.handle); err != nil {
				t.Fatal(err)
			}
			count.expect(t, want[len(want)-2:])
		})
	}
}

func TestCrossCodecFanOut(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	codecs := []string{"msgpack", "json", "cbor"}
	// Every codec subscribes; every codec publishes; all see the same values.
	inboxes := make([]*inbox, len(codecs))
	for i, cd := range codecs {
		inboxes[i] = &inbox{}
		c := dial(t, e.url, client.Options{Codec: cd})
		if _, err := c.Subscribe(ctxFor(t), "mixed", nil, inboxes[i].handle); err != nil {
			t.Fatalf("%s: Subscribe: %v", cd, err)
		}
	}
	var want []string
	for _, cd := range codecs {
		p := publisher(t, e.url, cd)
		for _, v := range []any{cd, int64(1) << 60, map[string]any{"k": []any{true, nil, 1.5}}} {
			if _, err := p.Publish(ctxFor(t), "mixed", v); err != nil {
				t.Fatalf("%s: Publish: %v", cd, err)
			}
			want = append(want, fmt.Sprint(v))
		}
	}
	for i, b := range inboxes {
		t.Run(codecs[i], func(t *testing.T) { b.expect(t, want) })
	}
}

func TestWriteDeleteRead(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	p := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)
	if v, _, err := p.Read(ctx, "kv"); err != nil || v != nil {
		t.Fatalf("Read of a new channel = %v, %v; want nil", v, err)
	}
	first, err := p.Write(ctx, "kv", map[string]any{"v": 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(ctx, "kv", "v2"); err != nil {
		t.Fatal(err)
	}
	if v, _, err := p.Read(ctx, "kv"); err != nil || v != "v2" {
		t.Fatalf("Read = %v, %v; want v2", v, err)
	}
	if v, pos, err := p.Read(ctx, "kv", client.AtPosition(first)); err != nil || fmt.Sprint(v) != "map[v:1]" || pos != first {
		t.Fatalf("Read at %v = %v at %v, %v; want map[v:1]", first, v, pos, err)
	}
	del, err := p.Delete(ctx, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if v, pos, err := p.Read(ctx, "kv"); err != nil || v != nil || pos != del {
		t.Fatalf("Read after Delete = %v at %v, %v; want nil at %v", v, pos, err, del)
	}
	if _, err := p.Publish(ctx, "", 1); !errors.Is(err, rtm.ErrChannelEmpty) {
		t.Errorf("Publish to an empty channel name: %v, want ErrChannelEmpty", err)
	}
	bad := rtm.Position{Epoch: first.Epoch + 1, Offset: first.Offset}
	if _, _, err := p.Read(ctx, "kv", client.AtPosition(bad)); codeOf(err) != rtm.CodeExpiredPosition {
		t.Errorf("Read at a position of another epoch: %v, want expired_position", err)
	}
}

func TestPublishNoAck(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	p := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)
	for i := 1; i <= 3; i++ {
		if err := p.PublishNoAck("fire", i); err != nil {
			t.Fatal(err)
		}
	}
	// The edge handles a connection's requests in order: once a later
	// acknowledged publish is answered, the earlier ones were stored.
	if _, err := p.Publish(ctx, "fire", 4); err != nil {
		t.Fatal(err)
	}
	var got inbox
	if _, err := p.Subscribe(ctx, "fire", &client.SubscribeOptions{HistoryCount: 10}, got.handle); err != nil {
		t.Fatal(err)
	}
	got.expect(t, numbers(1, 4))

	// A refused fire-and-forget publish is silent, and stores nothing.
	reader := dial(t, e.url, client.Options{})
	if err := reader.PublishNoAck("fire", "denied"); err != nil {
		t.Fatalf("PublishNoAck without the grant: %v, want nil (the edge answers nothing)", err)
	}
	if v, _, err := reader.Read(ctx, "fire"); err != nil || fmt.Sprint(v) != "4" {
		t.Fatalf("Read after a refused PublishNoAck = %v, %v; want 4", v, err)
	}
	if err := p.PublishNoAck("", 1); !errors.Is(err, rtm.ErrChannelEmpty) {
		t.Errorf("PublishNoAck to an empty channel name: %v, want ErrChannelEmpty", err)
	}
}

func TestSubscriptionIDs(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	c := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)
	var old inbox
	first, err := c.Subscribe(ctx, "room", nil, old.handle)
	if err != nil {
		t.Fatal(err)
	}
	if first.ID() != "room" || first.Channel() != "room" {
		t.Errorf("ID, Channel = %q, %q; want room, room", first.ID(), first.Channel())
	}
	_, err = c.Subscribe(ctx, "room", nil, func(client.Message) {})
	if codeOf(err) != rtm.CodeAlreadySubscribed {
		t.Fatalf("second Subscribe = %v, want already_subscribed", err)
	}
	var forced inbox
	if _, err := c.Subscribe(ctx, "room", &client.SubscribeOptions{Force: true}, forced.handle); err != nil {
		t.Fatalf("forced Subscribe: %v", err)
	}
	<-first.Done()
	if !errors.Is(first.Err(), client.ErrReplaced) {
		t.Errorf("replaced subscription Err() = %v, want ErrReplaced", first.Err())
	}
	var other inbox
	second, err := c.Subscribe(ctx, "room", &client.SubscribeOptions{ID: "room-2"}, other.handle)
	if err != nil {
		t.Fatal(err)
	}
	if second.ID() != "room-2" {
		t.Errorf("ID() = %q, want room-2", second.ID())
	}
	publishRange(t, c, "room", 1, 2)
	forced.expect(t, numbers(1, 2))
	other.expect(t, numbers(1, 2))
	if got := old.get(); len(got) != 0 {
		t.Errorf("the replaced subscription's handler got %v", got)
	}
	if _, err := c.Subscribe(ctx, "room", &client.SubscribeOptions{ID: "x"}, nil); !errors.Is(err, client.ErrOptions) {
		t.Errorf("Subscribe without handler = %v, want ErrOptions", err)
	}
}

func TestUnsubscribe(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	p := publisher(t, e.url, "msgpack")
	ctx := ctxFor(t)
	var first inbox
	s, err := p.Subscribe(ctx, "pos", nil, first.handle)
	if err != nil {
		t.Fatal(err)
	}
	last := publishRange(t, p, "pos", 1, 3)
	first.expect(t, numbers(1, 3))
	poll.Until(t, "the position to pass the last message", func() bool { return s.Position() == last.Next() })
	next := s.Position()
	if err := s.Unsubscribe(ctx); err != nil {
		t.Fatal(err)
	}
	<-s.Done()
	if !errors.Is(s.Err(), client.ErrUnsubscribed) {
		t.Errorf("Err() = %v, want ErrUnsubscribed", s.Err())
	}
	if err := s.Unsubscribe(ctx); err != nil {
		t.Errorf("second Unsubscribe: %v", err)
	}
	publishRange(t, p, "pos", 4, 5)
	// The id is free on the edge too: a new subscription resumes where the
	// old one stopped, without gap or duplicate.
	var second inbox
	if _, err := p.Subscribe(ctx, "pos", &client.SubscribeOptions{Position: &next}, second.handle); err != nil {
		t.Fatal(err)
	}
	second.expect(t, numbers(4, 5))
	if got := first.get(); len(got) != 3 {
		t.Errorf("the unsubscribed handler got %v", got)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	var states stateLog
	c := dial(t, e.url, client.Options{OnState: states.on})
	ctx := ctxFor(t)
	sub, err := c.Subscribe(ctx, "c", nil, func(client.Message) {})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	<-sub.Done()
	if !errors.Is(sub.Err(), client.ErrClosed) {
		t.Errorf("subscription Err() = %v, want ErrClosed", sub.Err())
	}
	if c.State() != client.Closed {
		t.Errorf("State() = %v, want closed", c.State())
	}
	if got := states.get(); len(got) == 0 || got[0] != client.Connecting || got[len(got)-1] != client.Closed {
		t.Errorf("OnState calls %v, want connecting first and closed last", got)
	}
	if _, err := c.Publish(ctx, "c", 1); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Publish after Close = %v, want ErrClosed", err)
	}
	if _, _, err := c.Read(ctx, "c"); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if _, err := c.Subscribe(ctx, "d", nil, func(client.Message) {}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if err := c.PublishNoAck("c", 1); !errors.Is(err, client.ErrClosed) {
		t.Errorf("PublishNoAck after Close = %v, want ErrClosed", err)
	}
}

func TestCloseFromHandler(t *testing.T) {
	t.Parallel()
	e := startEdge(t)
	c := dial(t, e.url, client.Options{})
	p := publisher(t, e.url, "json")
	ctx := ctxFor(t)
	closed := make(chan error, 1)
	var calls inbox
	sub, err := c.Subscribe(ctx, "bye", nil, func(m client.Message) {
		calls.handle(m)
		closed <- c.Close() // must not wait for this very callback
	})
	if err != nil {
		t.Fatal(err)
	}
	// Two batches: the second must never reach the handler.
	publishRange(t, p, "bye", 1, 1)
	if err := poll.Recv(t, "Close to return inside the handler", closed); err != nil {
		t.Fatalf("Close from a handler: %v", err)
	}
	publishRange(t, p, "bye", 2, 2)
	<-sub.Done()
	if c.State() != client.Closed || !errors.Is(sub.Err(), client.ErrClosed) {
		t.Errorf("after Close from a handler: State() = %v, Err() = %v", c.State(), sub.Err())
	}
	if got := calls.get(); len(got) != 1 {
		t.Errorf("handler called with %v after Close, want only the first message", got)
	}
	// The edge is still fine for others.
	if _, err := p.Publish(ctx, "bye", 3); err != nil {
		t.Fatal(err)
	}
}

package msgpack_test

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The codec as the browser build has it (mapped.go and requests.go in
// place of the fast paths and the library), tested natively against the
// codec as the edge has it.
var browser = msgpack.Browser{}

// TestBrowserCrossCodec checks that what the browser sends, the edge reads
// to the same envelope and body, and that what the edge sends, the browser
// reads to the same values as the edge would.
func TestBrowserCrossCodec(t *testing.T) {
	t.Parallel()
	for _, s := range browserSamples() {
		enc, dec := codec.Codec(c), codec.Codec(browser)
		dir := "edge to client"
		if s.sent() {
			enc, dec, dir = dec, enc, "client to edge"
		}
		t.Run(dir+"/"+s.name, func(t *testing.T) {
			t.Parallel()
			frame, err := enc.AppendPDU(nil, &s.pdu)
			if err != nil {
				t.Fatalf("AppendPDU: %v", err)
			}
			env, err := dec.Decode(frame)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if env.Action != s.pdu.Action || env.ID != s.pdu.ID {
				t.Fatalf("envelope = %q %v, want %q %v", env.Action, env.ID, s.pdu.Action, s.pdu.ID)
			}
			got := s.body()
			if err := dec.DecodeBody(env.Body, got); err != nil {
				t.Fatalf("DecodeBody: %v", err)
			}
			want := s.body()
			codectest.Decode(t, c, codectest.Encode(t, c, &s.pdu), want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("body = %#v\nwant %#v", got, want)
			}
		})
	}
}

// TestBrowserRequestsAsTheEdgeWrites checks that the browser writes every
// body it sends byte for byte as the other builds do (the library, or
// codec.AppendBody), without either.
func TestBrowserRequestsAsTheEdgeWrites(t *testing.T) {
	t.Parallel()
	for _, s := range browserSamples() {
		got, err := browser.AppendPDU(nil, &s.pdu)
		if err != nil {
			if s.sent() {
				t.Errorf("%s: %v", s.name, err)
			}
			continue
		}
		if want := codectest.Encode(t, c, &s.pdu); string(got) != string(want) {
			t.Errorf("%s: the browser writes\n%x, the edge\n%x", s.name, got, want)
		}
	}
	for _, body := range []any{(*rtm.SubscribeBody)(nil), (*rtm.PublishBody)(nil), &rtm.SubscribeBody{History: &rtm.History{}}} {
		p := &rtm.PDU{Action: rtm.ActionSubscribe, Body: body}
		got, err := browser.AppendPDU(nil, p)
		if want := codectest.Encode(t, c, p); err != nil || string(got) != string(want) {
			t.Errorf("%#v: the browser writes %x (%v), the edge %x", body, got, err, want)
		}
	}
}

// TestBrowserOtherBodies checks that body types a client neither sends nor
// receives are refused, not garbled.
func TestBrowserOtherBodies(t *testing.T) {
	t.Parallel()
	for _, s := range browserSamples() {
		switch s.pdu.Body.(type) {
		case nil, map[string]any, *rtm.Empty:
			continue // every codec writes these
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			frame, err := browser.AppendPDU(nil, &s.pdu)
			if !s.sent() {
				if err == nil {
					t.Fatalf("the client encoded a %T it never sends", s.pdu.Body)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := s.pdu.Body.(*rtm.PublishBody); ok {
				return // the fast path's on the edge; the browser reads it too
			}
			env, _ := browser.Decode(frame)
			codectest.WantCode(t, browser.DecodeBody(env.Body, s.body()), rtm.CodeInvalidFormat)
		})
	}
}

func TestBrowserDecodeBodyRefuses(t *testing.T) {
	t.Parallel()
	nested := strings.Repeat("91", codec.MaxDepth+10)
	tests := []struct {
		name string
		body string
		into any
	}{
		{name: "not a map", body: "90", into: new(rtm.PositionBody)},
		{name: "wrong field type", body: "81" + position + "01", into: new(rtm.PositionBody)},
		{name: "negative count", body: "85a4696e666fa0a6726561736f6ea0" + position + "a0" + subID + "a0b46d69737365645f6d6573736167655f636f756e74ff", into: new(rtm.SubscriptionInfo)},
		{name: "NaN", body: "81" + message + nan, into: new(rtm.ReadReply)},
		{name: "binary map key not UTF-8", body: "81" + message + "81c401ff01", into: new(rtm.ReadReply)},
		{name: "too deep", body: "81" + message + nested + "c0", into: new(rtm.ReadReply)},
		{name: "nonce not a string", body: "81a46461746181a56e6f6e636501", into: new(rtm.HandshakeReply)},
		{name: "messages not a list", body: "81" + messages + "01", into: new(rtm.SubscriptionData)},
		{name: "extra data", body: "80c0", into: new(map[string]any)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			codectest.WantCode(t, browser.DecodeBody(unhex(t, tt.body), tt.into), rtm.CodeInvalidFormat)
		})
	}
}

// TestBrowserDecodeBodyKeys checks that map keys given as binary or nil,
// which the library reads as strings, are read alike.
func TestBrowserDecodeBodyKeys(t *testing.T) {
	t.Parallel()
	body := unhex(t, "82"+"c408706f736974696f6e"+"a131"+message+"82c4016101c002") // {bin"position": "1", "message": {bin"a": 1, nil: 2}}
	var got, want rtm.ReadReply
	if err := browser.DecodeBody(body, &got); err != nil {
		t.Fatal(err)
	}
	if err := c.DecodeBody(body, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || got.Position != "1" {
		t.Fatalf("decoded %#v, the edge %#v", got, want)
	}
}

func TestBrowserAppendPDURefuses(t *testing.T) {
	t.Parallel()
	p := &rtm.PDU{Action: rtm.ActionPublish, Body: &rtm.PublishBody{Channel: "c", Message: math.NaN()}}
	dst := []byte{7}
	out, err := browser.AppendPDU(dst, p)
	if err == nil || len(out) != 1 {
		t.Fatalf("AppendPDU(NaN) = % x, %v; want an error and dst unchanged", out, err)
	}
	if _, err := browser.AppendPDU(nil, &rtm.PDU{Action: "\xff"}); err == nil {
		t.Fatal("an action that is not UTF-8 was encoded")
	}
}

// FuzzDecodeBrowser feeds arbitrary frames to the browser's codec: it
// never panics, refuses with invalid_format only, and a body both it and
// the edge's codec accept decodes to the same value, into each body type
// the browser receives.
func FuzzDecodeBrowser(f *testing.F) {
	for _, s := range browserSamples() {
		withoutLong(s.pdu.Body) // small seeds mutate faster
		if frame, err := c.AppendPDU(nil, &s.pdu); err == nil {
			f.Add(frame)
		}
	}
	f.Add(unhex(f, "83"+actionA+id+"cf0000000000000007"+body+"82"+channel+"a163"+message+"83a166ca3f000000a175cfffffffffffffffffa162c4020102"))
	f.Add(unhex(f, "82"+actionA+body+"81"+message+"d6ff00000001"))
	received := []func() any{func() any { return new(any) }, func() any { return new(map[string]any) }}
	for _, s := range browserSamples() {
		if !s.sent() {
			received = append(received, s.body)
		}
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		env, err := browser.Decode(frame)
		if err != nil {
			return // the edge's Decode, fuzzed by FuzzDecodeMsgpack
		}
		for _, body := range received {
			got, want := body(), body()
			err := browser.DecodeBody(env.Body, got)
			if err != nil {
				codectest.WantCode(t, err, rtm.CodeInvalidFormat)
				continue
			}
			if c.DecodeBody(env.Body, want) == nil && !reflect.DeepEqual(got, want) {
				t.Fatalf("%x into %T: the browser %#v, the edge %#v", env.Body, got, got, want)
			}
		}
	})
}

// BenchmarkBrowser measures the browser's hot paths: reading a
// subscription data PDU of 20 small messages the long way (Decode, then
// DecodeBody), as the browser does, and writing a publish.
func BenchmarkBrowser(b *testing.B) {
	msgs := make([]any, 20)
	for i := range msgs {
		msgs[i] = map[string]any{"text": "hello, world", "user": "alice", "n": int64(i), "ok": true}
	}
	frame := codectest.Encode(b, c, &rtm.PDU{Action: rtm.ActionSubscriptionData,
		Body: &rtm.SubscriptionData{SubscriptionID: "chat", Position: "1:20", Messages: msgs}})
	b.Run("DecodeData", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			env, err := browser.Decode(frame)
			if err != nil {
				b.Fatal(err)
			}
			var d rtm.SubscriptionData
			if err := browser.DecodeBody(env.Body, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("EncodePublish", func(b *testing.B) {
		p := &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(7), Body: &rtm.PublishBody{Channel: "chat",
			Message: map[string]any{"text": "hello, world", "user": "alice", "n": int64(1), "ok": true}}}
		var buf []byte
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = browser.AppendPDU(buf[:0], p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// withoutLong drops the long string of richMessage from the messages of a
// sample body.
func withoutLong(body any) {
	var msgs []any
	switch b := body.(type) {
	case *rtm.PublishBody:
		msgs = []any{b.Message}
	case *rtm.SubscriptionData:
		msgs = b.Messages
	case *rtm.PreviousReply:
		msgs = []any{b.Previous.Message}
	case *rtm.PreviousError:
		msgs = []any{b.Previous.Message}
	case *rtm.PresenceReply:
		for _, m := range b.Members {
			msgs = append(msgs, m.Info)
		}
	}
	for _, m := range msgs {
		if m, ok := m.(map[string]any); ok {
			delete(m, "long")
		}
	}
}

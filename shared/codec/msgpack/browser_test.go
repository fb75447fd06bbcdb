package msgpack_test

import (
	"math"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/internal/codectest"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// The codec as the browser build has it (requests.go in place of the
// library for the bodies it sends; the same decoder), tested natively
// against the codec as the edge has it.
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

// TestBrowserOtherBodies checks that body types a client never sends are
// refused by the browser's encoder, not garbled.
func TestBrowserOtherBodies(t *testing.T) {
	t.Parallel()
	for _, s := range browserSamples() {
		switch s.pdu.Body.(type) {
		case nil, map[string]any, *rtm.Empty:
			continue // every codec writes these
		}
		_, err := browser.AppendPDU(nil, &s.pdu)
		if s.sent() && err != nil {
			t.Errorf("%s: %v", s.name, err)
		}
		if !s.sent() && err == nil {
			t.Errorf("%s: the client encoded a %T it never sends", s.name, s.pdu.Body)
		}
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

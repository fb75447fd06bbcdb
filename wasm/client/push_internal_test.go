//go:build !js

package client

import (
	"io"
	"log/slog"
	"testing"

	"github.com/sluicehq/sluice/shared/codec"
	jsoncodec "github.com/sluicehq/sluice/shared/codec/json"
	msgpackcodec "github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestDataPosition: a data push hands its messages over and moves the
// resume point to its position, whichever way the codec reads it; one
// whose position is missing, empty or malformed still delivers, but keeps
// the last good resume point, so a reconnect does not restart from 0:0.
func TestDataPosition(t *testing.T) {
	good := rtm.Position{Epoch: 7, Offset: 3}
	for _, cd := range []codec.Codec{jsoncodec.Codec{}, msgpackcodec.Codec{}} {
		for _, tc := range []struct {
			name string
			body map[string]any
			want rtm.Position
		}{
			{"good", map[string]any{"position": "7:5"}, rtm.Position{Epoch: 7, Offset: 5}},
			{"missing", map[string]any{}, good},
			{"empty", map[string]any{"position": ""}, good},
			{"malformed", map[string]any{"position": "7-5"}, good},
		} {
			t.Run(cd.Name()+"/"+tc.name, func(t *testing.T) {
				c := &Client{log: slog.New(slog.NewTextHandler(io.Discard, nil)), subs: map[string]*Subscription{}}
				cn := &conn{codec: cd, pushes: c}
				cn.dd, _ = cd.(codec.DataDecoder)
				var got []any
				s := &Subscription{c: c, id: "s", opts: SubscribeOptions{Direct: true}, conn: cn, next: good,
					handler: func(m Message) { got = append(got, m.Value) }}
				c.subs["s"] = s
				tc.body["subscription_id"] = "s"
				tc.body["messages"] = []any{"m"}
				frame, err := cd.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionData, Body: tc.body})
				if err != nil {
					t.Fatal(err)
				}
				cn.handle(frame)
				if len(got) != 1 || got[0] != "m" {
					t.Fatalf("handler got %v, want [m]", got)
				}
				if s.next != tc.want || s.delivered != tc.want {
					t.Fatalf("resume point %v (delivered %v), want %v", s.next, s.delivered, tc.want)
				}
			})
		}
	}
}

// TestOutOfSyncWhilePaused: the edge's out_of_sync for a subscription the
// client has paused (its data dropped, an unsubscribe on its way) does not
// end it: that was the edge's read point, past what the client dropped.
// The subscription waits to be resubscribed from its own position, where
// the edge answers for what the client lacks. Any other subscription
// error, or out_of_sync for a subscription not paused, ends it.
func TestOutOfSyncWhilePaused(t *testing.T) {
	mine := rtm.Position{Epoch: 7, Offset: 3}
	for _, tc := range []struct {
		name  string
		lag   bool
		code  rtm.Code
		ends  bool
		waits bool // resubscribed once the buffer drained
	}{
		{name: "paused, out_of_sync", lag: true, code: rtm.CodeOutOfSync, waits: true},
		{name: "paused, authorization_denied", lag: true, code: rtm.CodeAuthorizationDenied, ends: true},
		{name: "live, out_of_sync", code: rtm.CodeOutOfSync, ends: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cd := jsoncodec.Codec{}
			c := &Client{log: slog.New(slog.NewTextHandler(io.Discard, nil)), subs: map[string]*Subscription{},
				work: make(chan struct{}, 1)}
			cn := &conn{codec: cd, pushes: c}
			s := &Subscription{c: c, id: "s", conn: cn, next: mine, lag: tc.lag, handler: func(Message) {}}
			c.subs["s"] = s
			frame, err := cd.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionSubscriptionErr, Body: map[string]any{
				"subscription_id": "s", "error": string(tc.code), "reason": "gone", "position": "7:90"}})
			if err != nil {
				t.Fatal(err)
			}
			cn.handle(frame)
			ended := s.finished && len(c.q.events) == 1 && c.q.events[0].kind == evError
			if ended != tc.ends {
				t.Fatalf("ended %v (finished %v, %d events), want %v", ended, s.finished, len(c.q.events), tc.ends)
			}
			waits := false
			subs, _ := c.waiting()
			for _, w := range subs {
				waits = waits || w == s
			}
			if waits != tc.waits || s.next != mine {
				t.Fatalf("waiting to be resubscribed: %v from %v, want %v from %v", waits, s.next, tc.waits, mine)
			}
		})
	}
}

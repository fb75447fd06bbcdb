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

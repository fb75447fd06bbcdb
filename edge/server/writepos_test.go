package server_test

import (
	"testing"

	"github.com/sluicehq/sluice/shared/rtm"
)

// TestWriteEmptyPositionRefused: an rtm/write whose position is there but
// empty or null, in every codec, is refused with Satori's invalid_format
// and stores nothing, rather than becoming an unconditional write that
// overwrites what the client never read; a write without the key stays
// unconditional, and the connection goes on.
func TestWriteEmptyPositionRefused(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	want := rtm.ErrorBody{Error: "invalid_format", Reason: "Invalid PDU: 'position' was invalid"}
	for _, cd := range allCodecs {
		t.Run(cd.Name(), func(t *testing.T) {
			t.Parallel()
			c := e.dialCodec(t, cd)
			channel := "kv-" + cd.Name()
			var first rtm.PositionBody
			c.call(rtm.ActionWrite, map[string]any{"channel": channel, "message": "first"}, &first)
			for _, tc := range []struct {
				name     string
				position any
			}{
				{"empty", ""},
				{"null", nil},
			} {
				c.next++
				c.send(&rtm.PDU{Action: rtm.ActionWrite, ID: rtm.IntID(c.next),
					Body: map[string]any{"channel": channel, "message": "lost", "position": tc.position}})
				env := c.recv()
				var eb rtm.ErrorBody
				if env.Action != "rtm/write/error" || c.codec.DecodeBody(env.Body, &eb) != nil || eb != want {
					t.Fatalf("write with position %s: got %s %+v, want rtm/write/error %+v", tc.name, env.Action, eb, want)
				}
			}
			var read rtm.ReadReply
			c.call(rtm.ActionRead, &rtm.ReadBody{Channel: channel}, &read)
			if read.Message != "first" || read.Position != first.Position {
				t.Fatalf("after the refused writes the channel holds %v at %s, want first at %s", read.Message, read.Position, first.Position)
			}
			// A position key inside the message is not the write's.
			c.call(rtm.ActionWrite, map[string]any{"channel": channel, "message": map[string]any{"position": ""}}, nil)
		})
	}
}

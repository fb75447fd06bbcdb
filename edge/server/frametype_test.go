package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/shared/rtm"
)

// TestWrongFrameType: a message in the other frame type than its codec's
// (binary on a JSON connection, text on a cbor or msgpack one) gets the
// unsolicited /error invalid_format saying which frames the connection
// takes, is not served even though its bytes are a valid request, and
// the connection goes on; the right frame type is served as ever.
func TestWrongFrameType(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	for _, cd := range allCodecs {
		t.Run(cd.Name(), func(t *testing.T) {
			t.Parallel()
			c := e.dialCodec(t, cd)
			channel := "frames-" + cd.Name()
			frame, err := cd.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionPublish, ID: rtm.IntID(99),
				Body: &rtm.PublishBody{Channel: channel, Message: "wrong frame"}})
			if err != nil {
				t.Fatal(err)
			}
			wrong, want := websocket.MessageBinary, "json connections take text frames"
			if cd.Binary() {
				wrong, want = websocket.MessageText, cd.Name()+" connections take binary frames"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := c.ws.Write(ctx, wrong, frame); err != nil {
				t.Fatal(err)
			}
			env := c.recv()
			var eb rtm.ErrorBody
			if env.Action != rtm.ActionError || !env.ID.IsZero() || c.codec.DecodeBody(env.Body, &eb) != nil ||
				eb.Error != "invalid_format" || !strings.Contains(eb.Reason, want) {
				t.Fatalf("a %v frame: got %s %v %+v, want /error invalid_format %q", wrong, env.Action, env.ID, eb, want)
			}
			var read rtm.ReadReply
			c.call(rtm.ActionRead, &rtm.ReadBody{Channel: channel}, &read)
			if read.Message != nil {
				t.Fatalf("the wrong frame was served: %s holds %v", channel, read.Message)
			}
			c.call(rtm.ActionPublish, &rtm.PublishBody{Channel: channel, Message: "right frame"}, nil)
		})
	}
}

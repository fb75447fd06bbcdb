package server_test

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"testing"

	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestStreamSessionMsgpack checks a session stream in a binary codec, as
// the browser client's fallback speaks it: PDUs in POSTs each after its
// length, the session's as base64 events, decoded by the codec.
func TestStreamSessionMsgpack(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	s, id := e.openSession(t, "msgpack")
	cd := msgpack.Codec{}
	var body []byte
	for i, p := range []*rtm.PDU{
		{Action: rtm.ActionSubscribe, ID: rtm.IntID(1), Body: &rtm.SubscribeBody{Channel: "bin"}},
		{Action: rtm.ActionPublish, ID: rtm.IntID(2), Body: &rtm.PublishBody{Channel: "bin", Message: []byte{0, 1, 2}}},
	} {
		pdu, err := cd.AppendPDU(nil, p)
		if err != nil {
			t.Fatalf("PDU %d: %v", i, err)
		}
		body = binary.BigEndian.AppendUint32(body, uint32(len(pdu)))
		body = append(body, pdu...)
	}
	if code, answer := e.post(t, "/v2/stream?appkey=test&stream="+id, "application/octet-stream", body); code != http.StatusNoContent {
		t.Fatalf("POST: %d %s", code, answer)
	}
	for _, want := range []string{"rtm/subscribe/ok", "rtm/publish/ok", "rtm/subscription/data"} {
		ev := s.next()
		frame, err := base64.StdEncoding.DecodeString(ev.Data)
		if err != nil {
			t.Fatalf("event %q is not base64: %v", ev.Data, err)
		}
		env, err := cd.Decode(frame)
		if err != nil || env.Action != want {
			t.Fatalf("PDU %+v (%v), want %s", env, err, want)
		}
		if want == "rtm/subscription/data" {
			var d rtm.SubscriptionData
			if err := cd.DecodeBody(env.Body, &d); err != nil || len(d.Messages) != 1 {
				t.Fatalf("data %+v: %v", d, err)
			}
			if b, ok := d.Messages[0].([]byte); !ok || string(b) != "\x00\x01\x02" {
				t.Fatalf("message %#v, want the bytes published", d.Messages[0])
			}
		}
	}
}

package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/shared/rtm"
)

// FuzzConnection feeds arbitrary frames to a live connection: whatever the
// frame, the edge must not panic, and the connection must still answer the
// next well-formed request.
func FuzzConnection(f *testing.F) {
	seeds := []string{
		`{"action":"rtm/publish","id":1,"body":{"channel":"a","message":{"x":[1,2.5,"s",null,true]}}}`,
		`{"action":"rtm/subscribe","id":2,"body":{"channel":"a","history":{"count":5,"age":60}}}`,
		`{"action":"rtm/subscribe","id":"s","body":{"channel":"a","position":"1:1","fast_forward":true,"force":true}}`,
		`{"action":"rtm/subscribe","id":8,"body":{"channel":"a","presence":true}}`,
		`{"action":"rtm/presence","id":9,"body":{"channel":"a","after":"ann","limit":1000}}`,
		`{"action":"rtm/unsubscribe","id":3,"body":{"subscription_id":"a"}}`,
		`{"action":"rtm/read","id":4,"body":{"channel":"a","position":"18446744073709551615:0"}}`,
		`{"action":"auth/handshake","id":5,"body":{"method":"role_secret","data":{"role":"admin"}}}`,
		`{"action":"auth/authenticate","id":6,"body":{"method":"jwt","credentials":{"token":"a.b.c"}}}`,
		`{"action":"rtm/delete","body":{"channel":"$heartbeat"}}`,
		// Satori's options.
		`{"action":"rtm/write","id":8,"body":{"channel":"a","message":1,"position":"0:0","read":"previous_message_on_error"}}`,
		`{"action":"rtm/publish","id":9,"body":{"channel":"a","message":1,"ttl":1,"ttl_message":{"gone":true},"read":"previous_message"}}`,
		`{"action":"rtm/delete","id":10,"body":{"channel":"a","purge":true,"read":"previous_message_on_ok"}}`,
		`{"action":"rtm/subscribe","id":11,"body":{"channel":"a","prefix":true,"only":"value_changes","history":{"count":1}}}`,
		`{"action":7,"id":[],"body":"x"}`,
		`{"action":"rtm/publish","id":1e400,"body":{"channel":"a","message":-1e400}}`,
		"\xff\xfe", `[]`, `null`, ``,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	e := startEdge(f, func(o *server.Options) { o.Limits.RequestsPerSecond = 1 << 30 })
	clients := make([]*codecClient, len(allCodecs))
	for i, c := range allCodecs {
		clients[i] = e.dialCodec(f, c)
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if len(frame) > 32<<10 {
			return // past the read limit the edge closes the connection by design
		}
		for _, c := range clients {
			checkUsable(t, c, frame)
		}
	})
}

// checkUsable sends frame, then a read with a sentinel id, and fails unless
// the sentinel's reply comes back ok: whatever the frame did, the
// connection still works.
func checkUsable(t *testing.T, c *codecClient, frame []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sentinel := rtm.StringID("sentinel-8d1f")
	read, err := c.codec.AppendPDU(nil, &rtm.PDU{Action: rtm.ActionRead, ID: sentinel, Body: &rtm.ReadBody{Channel: "z"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ws.Write(ctx, frameType(c.codec), frame); err != nil {
		t.Fatalf("%s write: %v", c.codec.Name(), err)
	}
	if err := c.ws.Write(ctx, frameType(c.codec), read); err != nil {
		t.Fatalf("%s write sentinel: %v", c.codec.Name(), err)
	}
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			t.Fatalf("%s connection unusable after %q: %v", c.codec.Name(), frame, err)
		}
		env, err := c.codec.Decode(data)
		if err != nil {
			t.Fatalf("%s: the edge sent an undecodable frame %q: %v", c.codec.Name(), data, err)
		}
		if env.ID == sentinel {
			if env.Action != rtm.Reply(rtm.ActionRead, rtm.OutcomeOK) {
				t.Fatalf("%s: sentinel read failed after %q: %s", c.codec.Name(), frame, data)
			}
			return
		}
	}
}

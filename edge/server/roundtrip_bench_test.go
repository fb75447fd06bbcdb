package server_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/edge/server"
)

// BenchmarkPublishRoundTrip is a JSON client with one publish in flight,
// as Satori's SDKs often run: each op writes an rtm/publish over a real
// WebSocket and reads its rtm/publish/ok. It measures what the edge adds
// between a request and its reply (decoding, storing, acknowledging,
// and getting the reply written), with the loopback round trip.
func BenchmarkPublishRoundTrip(b *testing.B) {
	// Past the default rate limit, which would refuse the publishes.
	e := startEdge(b, func(o *server.Options) { o.Limits.RequestsPerSecond, o.Limits.RequestBurst = 1_000_000, 1_000_000 })
	c := e.dial(b, "test", "")
	frame := []byte(`{"action":"rtm/publish","id":1,"body":{"channel":"bench","message":{"text":"hello, world","user":"alice","n":42,"ok":true}}}`)
	ack := []byte(`{"action":"rtm/publish/ok","id":1,"body":{"position":"`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.ws.Write(ctx, websocket.MessageText, frame); err != nil {
			b.Fatal(err)
		}
		if _, reply, err := c.ws.Read(ctx); err != nil || !bytes.HasPrefix(reply, ack) {
			b.Fatalf("reply %q, %v", reply, err)
		}
	}
}

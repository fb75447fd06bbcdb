package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/shared/codec"
	"github.com/sluicehq/sluice/shared/codec/cbor"
	"github.com/sluicehq/sluice/shared/codec/json"
	"github.com/sluicehq/sluice/shared/codec/msgpack"
	"github.com/sluicehq/sluice/shared/rtm"
)

// TestBadFramesAreRateLimited floods a connection with frames that do not
// decode: each gets its /error, but no faster than the request rate limit
// allows, and the connection then serves a valid request.
func TestBadFramesAreRateLimited(t *testing.T) {
	t.Parallel()
	const (
		rps   = 100 // also the burst
		flood = 150
	)
	e := startEdge(t, func(o *server.Options) { o.Limits.RequestsPerSecond, o.Limits.RequestBurst = rps, rps })
	c := e.dial(t, "test", "")
	start := time.Now()
	for range flood {
		c.sendText("not json")
	}
	for i := range flood {
		p := c.recv()
		if p.Action != "/error" || p.Body["error"] != "json_parse_error" {
			t.Fatalf("reply %d: %s %v, want /error json_parse_error", i, p.Action, p.Body)
		}
	}
	// A full bucket holds rps tokens; the rest come at rps a second. Before
	// the fix all the replies came within milliseconds.
	elapsed := time.Since(start)
	if least := time.Duration(flood-rps) * time.Second / rps; elapsed < least*9/10 {
		t.Fatalf("%d error replies in %v; the limit of %d/s allows them no sooner than %v", flood, elapsed, rps, least)
	}
	deadline := time.Now().Add(5 * time.Second)
	for id := 1; ; id++ {
		p := c.request("rtm/publish", id, map[string]any{"channel": "a", "message": "after the flood"})
		if p.Action == "rtm/publish/ok" {
			break
		}
		if p.Body["error"] != "too_many_requests" || time.Now().After(deadline) {
			t.Fatalf("after the flood: %s %v, want ok within 5 s", p.Action, p.Body)
		}
		time.Sleep(20 * time.Millisecond) // pacing a retry loop, not waiting for an event
	}
}

// TestInvalidUTF8IsNotAnAlias checks that a JSON frame with a byte that is
// not UTF-8 is refused with json_parse_error instead of being decoded with
// U+FFFD in its place: "alias\xff" must not publish to "alias\ufffd".
func TestInvalidUTF8IsNotAnAlias(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.expectOK("rtm/publish", 1, map[string]any{"channel": "alias\ufffd", "message": "genuine"})
	c.sendText("{\"action\":\"rtm/publish\",\"id\":2,\"body\":{\"channel\":\"alias\xff\",\"message\":\"forged\"}}")
	if p := c.recv(); p.Action != "/error" || p.Body["error"] != "json_parse_error" {
		t.Fatalf("frame with \\xff: %s %v, want /error json_parse_error", p.Action, p.Body)
	}
	// The connection stays usable, and the channel holds what was sent to it.
	got := c.expectOK("rtm/read", 3, map[string]any{"channel": "alias\ufffd"})
	if got["message"] != "genuine" {
		t.Fatalf("alias\\ufffd holds %v, want \"genuine\"", got["message"])
	}
}

// TestBadBodySameReasonInEveryCodec sends one malformed subscribe in each
// codec: the error reply is the same in all of them, with no Go type in
// its reason.
func TestBadBodySameReasonInEveryCodec(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	want := `body field "history.count" has the wrong type (string)`
	for _, cd := range []codec.Codec{json.Codec{}, cbor.Codec{}, msgpack.Codec{}} {
		c := e.dialCodec(t, cd)
		c.send(&rtm.PDU{Action: rtm.ActionSubscribe, ID: rtm.IntID(1), Body: map[string]any{
			"channel": "a", "history": map[string]any{"count": "ten"},
		}})
		env := c.recv()
		var eb rtm.ErrorBody
		if err := cd.DecodeBody(env.Body, &eb); err != nil || env.Action != "rtm/subscribe/error" ||
			eb.Error != "invalid_format" || eb.Reason != want {
			t.Errorf("%s: %s %+v (%v), want invalid_format %q", cd.Name(), env.Action, eb, err, want)
		}
	}
}

// TestStalledFrameIsClosed announces a 2,000-byte frame, sends 10 bytes of
// it and stalls: the edge closes the connection with 1008 once the frame
// timeout has passed, instead of holding it until pings give up.
func TestStalledFrameIsClosed(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.Limits.FrameTimeout = 100 * time.Millisecond })
	nc, err := net.DialTimeout("tcp", e.http.Listener.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(nc)
	_, err = io.WriteString(nc, "GET /v2?appkey=test HTTP/1.1\r\nHost: edge\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	// A masked text frame header claiming 2,000 bytes (key 0), then 10 bytes.
	frame := append([]byte{0x81, 0x80 | 126, 0x07, 0xd0, 0, 0, 0, 0}, make([]byte, 10)...)
	if _, err := nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	var h [4]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		t.Fatalf("waiting for the close frame: %v", err)
	}
	if op, code := h[0]&0x0f, int(h[2])<<8|int(h[3]); op != 0x8 || code != 1008 {
		t.Fatalf("got opcode %d code %d, want a close frame with 1008", op, code)
	}
}

package server_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/internal/poll"
)

// openSession opens a session stream and returns it and its id.
func (e *edge) openSession(t testing.TB, codec string) (*sseStream, string) {
	t.Helper()
	path := "/v2/stream?appkey=test"
	if codec != "" {
		path += "&codec=" + codec
	}
	s := e.openSSE(t, path, nil)
	ev := s.next()
	if ev.Event != "session" {
		t.Fatalf("first event %+v, want session", ev)
	}
	return s, jsonOf(t, ev.Data)["id"].(string)
}

func TestStreamSessionRoundTrip(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	s, id := e.openSession(t, "")
	code, body := e.post(t, "/v2/stream?appkey=test&stream="+id, "text/plain",
		[]byte(`{"action":"rtm/subscribe","id":1,"body":{"channel":"chat"}}`+"\n"+
			`{"action":"rtm/publish","id":2,"body":{"channel":"chat","message":"hi"}}`+"\n"))
	if code != http.StatusNoContent {
		t.Fatalf("POST: %d %s", code, body)
	}
	for _, want := range []string{"rtm/subscribe/ok", "rtm/publish/ok", "rtm/subscription/data"} {
		ev := s.next()
		if got := jsonOf(t, ev.Data)["action"]; got != want {
			t.Fatalf("got %s, want %s: %s", got, want, ev.Data)
		}
	}
}

// postPDUs posts JSON PDUs to a session stream, one a line.
func (e *edge) postPDUs(t *testing.T, id string, pdus ...string) {
	t.Helper()
	if code, body := e.post(t, "/v2/stream?appkey=test&stream="+id, "text/plain", []byte(strings.Join(pdus, "\n"))); code != http.StatusNoContent {
		t.Fatalf("POST: %d %s", code, body)
	}
}

// nextPDU reads the next event of a session stream as a PDU.
func (s *sseStream) nextPDU(t *testing.T) map[string]any {
	t.Helper()
	ev := s.next()
	if ev.Event != "" {
		t.Fatalf("event %q (%s), want a PDU", ev.Event, ev.Data)
	}
	return jsonOf(t, ev.Data)
}

// TestStreamMalformedInput checks what a client that sends garbage gets:
// a clear refusal of a body that cannot be split (and the session sees
// none of it), the RTM error of a PDU that does not parse, and a session
// that goes on serving after both.
func TestStreamMalformedInput(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	s, id := e.openSession(t, "")
	e.postPDUs(t, id, `{"action":"rtm/subscribe","id":1,"body":{"channel":"m"}}`, `{"action": nope`)
	if p := s.nextPDU(t); p["action"] != "rtm/subscribe/ok" {
		t.Fatalf("got %v, want rtm/subscribe/ok", p)
	}
	if p := s.nextPDU(t); p["action"] != "/error" || p["body"].(map[string]any)["error"] != "json_parse_error" {
		t.Fatalf("got %v, want /error json_parse_error", p)
	}

	bin, binID := e.openSession(t, "msgpack")
	for _, tt := range []struct {
		name, stream string
		body         []byte
		status       int
		code         string
	}{
		{"truncated length", binID, []byte{0, 0}, 400, "invalid_format"},
		{"truncated PDU", binID, []byte{0, 0, 0, 9, 1, 2}, 400, "invalid_format"},
		{"PDU over the limit", binID, []byte{0x7f, 0xff, 0xff, 0xff}, 413, "message_too_large"},
		{"unknown stream", "0123", []byte("{}"), 404, "unknown_stream"},
	} {
		code, body := e.post(t, "/v2/stream?appkey=test&stream="+tt.stream, "application/octet-stream", tt.body)
		if code != tt.status || jsonOf(t, body)["error"] != tt.code {
			t.Errorf("%s: %d %s, want %d %s", tt.name, code, body, tt.status, tt.code)
		}
	}
	// Nothing of the refused bodies reached the session; it serves on.
	e.postPDUs(t, id, `{"action":"rtm/publish","id":2,"body":{"channel":"m","message":"still here"}}`)
	if p := s.nextPDU(t); p["action"] != "rtm/publish/ok" {
		t.Fatalf("got %v, want rtm/publish/ok", p)
	}
	bin.close()
}

// TestStreamLimits checks that a stream counts against the same limits
// as a WebSocket: the edge's connections, and the session's request
// rate.
func TestStreamLimits(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		o.Limits.Connections = 1
		o.Limits.RequestsPerSecond = 5
	})
	s, id := e.openSession(t, "")
	resp, _ := e.get(t, "/v2/subscribe?appkey=test&channel=c", nil)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable || jsonOf(t, body)["error"] != "too_many_connections" {
		t.Fatalf("second stream at a limit of one: %s %s", resp.Status, body)
	}
	var pdus []string
	for i := 1; i <= 20; i++ {
		pdus = append(pdus, `{"action":"rtm/publish","id":`+itoa(i)+`,"body":{"channel":"c","message":1}}`)
	}
	e.postPDUs(t, id, pdus...)
	limited := 0
	for range 20 {
		if p := s.nextPDU(t); p["action"] == "rtm/publish/error" && p["body"].(map[string]any)["error"] == "too_many_requests" {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("20 requests at once under a limit of 5/s: none refused")
	}
}

// TestStreamStalledReaderIsCutOff checks that a stream whose client stops
// reading is dropped past the write timeout, as a WebSocket is, and
// counted; and that a client that goes away ends its session.
func TestStreamStalledReaderIsCutOff(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		o.Limits.WriteTimeout = 300 * time.Millisecond
		o.Limits.RequestsPerSecond = 1 << 30
	})
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.httpURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /v2/subscribe?appkey=test&channel=flood HTTP/1.1\r\nHost: edge\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the stream to open", func() bool { return e.srv.Stats().Connections == 1 })
	pub := e.dial(t, "test", "")
	pub.expectOK("rtm/publish", 1, map[string]any{"channel": "flood", "message": 0})
	pad := strings.Repeat("p", 8000)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; e.srv.Stats().SlowCloses == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("after %d messages the stalled stream is still open", i)
		}
		pub.send("rtm/publish", nil, map[string]any{"channel": "flood", "message": pad})
	}
	poll.Until(t, "the stalled stream to go, only the publisher left", func() bool { return e.srv.Stats().Connections == 1 })

	s, _ := e.openSession(t, "")
	poll.Until(t, "the session stream to count", func() bool { return e.srv.Stats().Connections == 2 })
	if st := e.srv.Stats(); st.HTTPStreams != 1 || st.HTTPStreamsTotal != 2 {
		t.Errorf("HTTP streams open %d, opened %d; want 1 and 2", st.HTTPStreams, st.HTTPStreamsTotal)
	}
	s.close()
	poll.Until(t, "the session of a client gone to end", func() bool { return e.srv.Stats().Connections == 1 })
	if n := e.srv.Stats().HTTPStreams; n != 0 {
		t.Errorf("HTTP streams open %d after they ended, want 0", n)
	}
}

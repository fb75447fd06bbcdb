package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicehq/sluice/edge/server"
)

// publishTexts publishes texts to channel over a WebSocket, each acked.
func (e *edge) publishTexts(t *testing.T, channel string, texts ...string) {
	t.Helper()
	c := e.dial(t, "test", "")
	for i, text := range texts {
		c.expectOK("rtm/publish", i+1, map[string]any{"channel": channel, "message": map[string]any{"text": text}})
	}
}

// streamed is one message of a subscribe stream.
type streamed struct {
	Channel  string `json:"channel"`
	Position string `json:"position"`
	Message  struct {
		Text string `json:"text"`
	} `json:"message"`
}

func decodeStreamed(t *testing.T, data string) streamed {
	t.Helper()
	var m streamed
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatalf("event data %q: %v", data, err)
	}
	return m
}

// nextText reads the next message event and returns its text and id.
func (s *sseStream) nextText(t *testing.T) (string, string) {
	t.Helper()
	ev := s.next()
	if ev.Event != "" {
		t.Fatalf("event %q (%s), want a message", ev.Event, ev.Data)
	}
	m := decodeStreamed(t, ev.Data)
	if ev.ID != m.Position {
		t.Fatalf("event id %q, want its position %q", ev.ID, m.Position)
	}
	return m.Message.Text, ev.ID
}

// TestSubscribeStreamResumesByLastEventID checks what EventSource's own
// reconnect does: the stream dropped after m1, messages published
// meanwhile, and the new request's Last-Event-ID gets m2, m3, m4: no gap,
// no duplicate.
func TestSubscribeStreamResumesByLastEventID(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	s := e.openSSE(t, "/v2/subscribe?appkey=test&channel=feed", nil)
	e.publishTexts(t, "feed", "m1", "m2")
	text, id := s.nextText(t)
	if text != "m1" {
		t.Fatalf("first message %q, want m1", text)
	}
	s.close()
	e.publishTexts(t, "feed", "m3", "m4")

	s = e.openSSE(t, "/v2/subscribe?appkey=test&channel=feed", map[string]string{"Last-Event-ID": id})
	for _, want := range []string{"m2", "m3", "m4"} {
		if text, _ := s.nextText(t); text != want {
			t.Fatalf("after resuming at %s: got %q, want %q", id, text, want)
		}
	}
}

// TestSubscribeStreamSeveralChannels checks that the id of each event
// carries every channel's position, so that one Last-Event-ID resumes
// them all.
func TestSubscribeStreamSeveralChannels(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	path := "/v2/subscribe?appkey=test&channel=a&channel=b"
	s := e.openSSE(t, path, nil)
	e.publishTexts(t, "a", "a1")
	e.publishTexts(t, "b", "b1")
	s.next()
	last := s.next()
	if n := strings.Count(last.ID, ","); n != 1 {
		t.Fatalf("id %q: want two positions", last.ID)
	}
	s.close()
	e.publishTexts(t, "b", "b2")
	e.publishTexts(t, "a", "a2")
	s = e.openSSE(t, path, map[string]string{"Last-Event-ID": last.ID})
	got := map[string]bool{}
	for range 2 {
		m := decodeStreamed(t, s.next().Data)
		got[m.Channel+":"+m.Message.Text] = true
	}
	if !got["a:a2"] || !got["b:b2"] {
		t.Fatalf("after resuming: %v, want a2 and b2 only", got)
	}
}

// TestSubscribeStreamNDJSON checks the stream for clients without
// EventSource: a line per message, resumed with the position parameter;
// a message published with white space in it stays one line.
func TestSubscribeStreamNDJSON(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	c := e.dial(t, "test", "")
	c.sendText("{\"action\":\"rtm/publish\",\"id\":1,\"body\":{\"channel\":\"nd\",\"message\":{\n \"text\": \"m1\"\n}}}")
	first := c.recv().Body["position"].(string)
	e.publishTexts(t, "nd", "m2")
	resp, _ := e.get(t, "/v2/subscribe?appkey=test&channel=nd&format=ndjson&position="+url.QueryEscape(first), nil)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || ct != "application/x-ndjson" {
		t.Fatalf("%s %q", resp.Status, ct)
	}
	br := bufio.NewReader(resp.Body)
	for _, want := range []string{"m1", "m2"} {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if m := decodeStreamed(t, line); m.Message.Text != want {
			t.Fatalf("line %q, want %s", line, want)
		}
	}
}

// TestSubscribeStreamRefusals checks that what a WebSocket session would
// refuse is refused before the stream starts, with the HTTP status and
// the edge's refusal body.
func TestSubscribeStreamRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) { o.AllowedOrigins = []string{"app.example.com"} })
	exp := time.Now().Add(time.Hour).Unix()
	reader := signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "reader", "exp": exp})
	tests := []struct {
		name   string
		path   string
		header map[string]string
		status int
		code   string
	}{
		{"unknown appkey", "/v2/subscribe?appkey=nope&channel=c", nil, 401, "invalid_appkey"},
		{"bad token", "/v2/subscribe?appkey=test&channel=c&token=not.a.jwt", nil, 401, "authentication_failed"},
		{"token of another key", "/v2/subscribe?appkey=test&channel=c", map[string]string{"Authorization": "Bearer " +
			signJWT(t, []byte("another-secret-of-at-least-32-bytes"), jwt.MapClaims{"exp": exp})}, 401, "authentication_failed"},
		{"role may not subscribe", "/v2/subscribe?appkey=test&channel=chat&token=" + reader, nil, 403, "authorization_denied"},
		{"no channel", "/v2/subscribe?appkey=test", nil, 400, "invalid_format"},
		{"bad channel", "/v2/subscribe?appkey=test&channel=a%00b", nil, 400, "invalid_format"},
		{"same channel twice", "/v2/subscribe?appkey=test&channel=a&channel=a", nil, 400, "invalid_format"},
		{"bad Last-Event-ID", "/v2/subscribe?appkey=test&channel=c", map[string]string{"Last-Event-ID": "yesterday"}, 400, "invalid_format"},
		{"positions for other channels", "/v2/subscribe?appkey=test&channel=c&position=1:1,1:2", nil, 400, "invalid_format"},
		{"origin not allowed", "/v2/subscribe?appkey=test&channel=c", map[string]string{"Origin": "https://evil.example.net"}, 403, "authorization_denied"},
		{"POST", "", nil, 405, "invalid_operation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var status int
			var body string
			if tt.path == "" {
				status, body = e.post(t, "/v2/subscribe?appkey=test&channel=c", "text/plain", nil)
			} else {
				resp, _ := e.get(t, tt.path, tt.header)
				status, body = resp.StatusCode, readAll(t, resp)
			}
			if status != tt.status || jsonOf(t, body)["error"] != tt.code {
				t.Fatalf("%d %s, want %d %s", status, body, tt.status, tt.code)
			}
		})
	}
	// The reader's grant does let it subscribe to news.
	e.openSSE(t, "/v2/subscribe?appkey=test&channel=news.sport&token="+reader, nil)
}

// TestSubscribeStreamExpiredPosition checks a resume past retention: the
// stream reports it as RTM does (rtm/subscription/error), then ends.
func TestSubscribeStreamExpiredPosition(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	e.publishTexts(t, "old", "m1")
	s := e.openSSE(t, "/v2/subscribe?appkey=test&channel=old", map[string]string{"Last-Event-ID": "999:1"})
	ev := s.next()
	if ev.Event != "rtm/subscription/error" || jsonOf(t, ev.Data)["error"] != "expired_position" {
		t.Fatalf("event %+v, want rtm/subscription/error expired_position", ev)
	}
	if _, err := s.read(); err == nil {
		t.Fatal("the stream goes on after the error")
	}
}

// TestStreamsGoAwayOnShutdown checks that a shutting-down edge tells its
// streams to go elsewhere as it tells WebSockets (1001, as a close event),
// ends them, and waits for them.
func TestStreamsGoAwayOnShutdown(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	sub := e.openSSE(t, "/v2/subscribe?appkey=test&channel=c", nil)
	sess, _ := e.openSession(t, "")
	if err := e.srv.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	for _, s := range []*sseStream{sub, sess} {
		ev := s.next()
		if ev.Event != "close" || jsonOf(t, ev.Data)["code"] != float64(1001) {
			t.Fatalf("event %+v, want close 1001", ev)
		}
		if _, err := s.read(); err == nil {
			t.Fatal("the stream goes on after its close event")
		}
	}
	if n := e.srv.Stats().HTTPStreams; n != 0 {
		t.Fatalf("%d streams open after Shutdown", n)
	}
}

// TestSubscribeStreamHTTP10 checks a stream to an HTTP/1.0 client, as
// nginx proxies by default: the body is not chunked, and ends with the
// connection.
func TestSubscribeStreamHTTP10(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.httpURL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("GET /v2/subscribe?appkey=test&channel=old&format=ndjson HTTP/1.0\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(resp.TransferEncoding) != 0 || !resp.Close {
		t.Fatalf("%s, transfer encoding %v, close %v", resp.Status, resp.TransferEncoding, resp.Close)
	}
	e.publishTexts(t, "old", "m1")
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || decodeStreamed(t, line).Message.Text != "m1" {
		t.Fatalf("line %q: %v", line, err)
	}
}

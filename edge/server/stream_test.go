package server_test

import (
	"net/http"
	"testing"
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

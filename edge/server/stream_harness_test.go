package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseEvent is one Server-Sent Event as EventSource sees it.
type sseEvent struct {
	Event string // "" for "message"
	ID    string
	Data  string
}

// sseStream reads a text/event-stream response.
type sseStream struct {
	t      testing.TB
	resp   *http.Response
	br     *bufio.Reader
	cancel context.CancelFunc
	lastID string // the last id seen, as EventSource keeps it
}

// httpURL is the edge's base URL over HTTP.
func (e *edge) httpURL() string { return e.http.URL }

// get sends a GET to path with headers and returns the response; the
// request ends with the test.
func (e *edge) get(t testing.TB, path string, header map[string]string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.httpURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	return resp, cancel
}

// openSSE opens an event stream at path and checks it is one.
func (e *edge) openSSE(t testing.TB, path string, header map[string]string) *sseStream {
	t.Helper()
	resp, cancel := e.get(t, path, header)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s %q: %s", path, resp.Status, resp.Header.Get("Content-Type"), b)
	}
	return &sseStream{t: t, resp: resp, br: bufio.NewReader(resp.Body), cancel: cancel}
}

// next returns the next event, skipping comments, failing the test
// after 10 s: a bound on a hang, not a timed assertion.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	type result struct {
		ev  sseEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		ev, err := s.read()
		done <- result{ev, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			s.t.Fatalf("event stream: %v", r.err)
		}
		return r.ev
	case <-time.After(10 * time.Second):
		s.cancel()
		<-done
		s.t.Fatal("no event within 10s")
		return sseEvent{}
	}
}

// read parses one event as the SSE standard says.
func (s *sseStream) read() (sseEvent, error) {
	var ev sseEvent
	var data []string
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if data == nil {
				continue // a keep-alive comment's end, or an empty event
			}
			ev.Data = strings.Join(data, "\n")
			if ev.ID != "" {
				s.lastID = ev.ID
			}
			return ev, nil
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			ev.Event = value
		case "id":
			ev.ID = value
		case "data":
			data = append(data, value)
		}
	}
}

// close ends the stream from the client's side.
func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// post sends body to path and returns the status and the answer.
func (e *edge) post(t testing.TB, path, ctype string, body []byte) (int, string) {
	t.Helper()
	resp, err := http.Post(e.httpURL()+path, ctype, strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// jsonOf decodes s, failing the test if it is not JSON.
func jsonOf(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %q: %v", s, err)
	}
	return m
}

// readAll reads a response's body.
func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/sluicehq/sluice/edge/server"
)

// publishHTTP posts body to /v2/publish with token (none if empty).
func (e *edge) publishHTTP(t *testing.T, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.httpURL()+"/v2/publish?appkey=test", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode, jsonOf(t, readAll(t, resp))
}

// TestPublishOverHTTP checks the one-shot publish: answered as
// rtm/publish is, with the checks of a WebSocket session.
func TestPublishOverHTTP(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	exp := time.Now().Add(time.Hour).Unix()
	reader := signJWT(t, []byte(jwtSecret), jwt.MapClaims{"role": "reader", "exp": exp})
	writer := signJWT(t, []byte(jwtSecret), jwt.MapClaims{"publish": []string{"news*"}, "role": "reader", "exp": exp})
	s := e.openSSE(t, "/v2/subscribe?appkey=test&channel=news", nil)

	code, body := e.publishHTTP(t, writer, `{"channel":"news","message":{"text":"over HTTP"}}`)
	if code != http.StatusOK || body["position"] == nil {
		t.Fatalf("publish: %d %v", code, body)
	}
	if text, id := s.nextText(t); text != "over HTTP" {
		t.Fatalf("subscriber got %q (%s)", text, id)
	}
	big := strings.Repeat("x", 70<<10)
	for _, tt := range []struct {
		name, token, body string
		status            int
		code              string
	}{
		{"grant lacks publish", reader, `{"channel":"news","message":1}`, 403, "authorization_denied"},
		{"bad token", "x.y.z", `{"channel":"news","message":1}`, 401, "authentication_failed"},
		{"message too large", "", `{"channel":"c","message":"` + big + `"}`, 413, "message_too_large"},
		{"not JSON", "", `channel=c`, 400, "invalid_format"},
		{"no channel", "", `{"message":1}`, 400, "invalid_format"},
	} {
		code, body := e.publishHTTP(t, tt.token, tt.body)
		if code != tt.status || body["error"] != tt.code {
			t.Errorf("%s: %d %v, want %d %s", tt.name, code, body, tt.status, tt.code)
		}
	}
}

// TestPublishOverHTTPRateLimit checks that one-shot publishes from one
// address are bounded as a connection's requests are.
func TestPublishOverHTTPRateLimit(t *testing.T) {
	t.Parallel()
	e := startEdge(t, func(o *server.Options) {
		o.Limits.RequestsPerSecond = 1
		o.Limits.RequestBurst = 3
	})
	limited := 0
	for range 10 {
		if code, body := e.publishHTTP(t, "", `{"channel":"c","message":1}`); code == http.StatusTooManyRequests && body["error"] == "too_many_requests" {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("10 publishes at once under a limit of 1/s (burst 3): none refused")
	}
}

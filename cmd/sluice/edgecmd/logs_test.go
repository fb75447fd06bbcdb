package edgecmd

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/auth"
	"github.com/sluicehq/sluice/internal/poll"
)

// Secrets and contents the log test sends; none may reach the logs.
const (
	logTestSecret  = "role-secret-do-not-log-8c1e"
	logTestJWTKey  = "jwt-key-do-not-log-0123456789abcdef0123"
	logTestMessage = "message-content-do-not-log-5d2b"
	logTestGarbage = "garbage-frame-do-not-log-77aa"
)

// TestLogsKeepSecrets drives authentication (role_secret and JWT, right
// and wrong), publishing and a malformed frame through an edge logging at
// debug level, then checks the logs: one line per closed connection with
// its close code and reason, and no secret, token, nonce, proof or
// message content anywhere.
func TestLogsKeepSecrets(t *testing.T) {
	e := startTestEdge(t, `
log: {level: debug, format: json}
apps:
  - appkey: logs
    jwt_key: `+logTestJWTKey+`
    roles:
      default: {subscribe: ["*"]}
      publisher: {secret: `+logTestSecret+`, publish: ["*"], subscribe: ["*"]}
`)
	url := e.url + "/v2?appkey=logs"
	var leaks []string // strings the edge saw that must not be logged

	pub := dialJSON(t, url, nil)
	_, body := pub.call("auth/handshake", map[string]any{"method": "role_secret", "data": map[string]any{"role": "publisher"}})
	nonce := body["data"].(map[string]any)["nonce"].(string)
	proof := auth.Hash(logTestSecret, nonce)
	leaks = append(leaks, nonce, proof)
	if a, _ := pub.call("auth/authenticate", map[string]any{"method": "role_secret", "credentials": map[string]any{"hash": proof}}); a != "auth/authenticate/ok" {
		t.Fatalf("authenticate: %s", a)
	}

	sub := dialJSON(t, url, nil)
	_, body = sub.call("auth/handshake", map[string]any{"method": "role_secret", "data": map[string]any{"role": "publisher"}})
	wrong := auth.Hash("not-the-secret", body["data"].(map[string]any)["nonce"].(string))
	leaks = append(leaks, wrong)
	if a, _ := sub.call("auth/authenticate", map[string]any{"method": "role_secret", "credentials": map[string]any{"hash": wrong}}); a != "auth/authenticate/error" {
		t.Fatalf("wrong proof: %s", a)
	}
	token, err := auth.Mint([]byte(logTestJWTKey), auth.Claims{Subscribe: []string{"*"}, Expires: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	leaks = append(leaks, token)
	if a, _ := sub.call("auth/authenticate", map[string]any{"method": "jwt", "credentials": map[string]any{"token": token}}); a != "auth/authenticate/ok" {
		t.Fatalf("jwt: %s", a)
	}
	if a, _ := sub.call("rtm/subscribe", map[string]any{"channel": "chat"}); a != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %s", a)
	}
	if a, _ := pub.call("rtm/publish", map[string]any{"channel": "chat", "message": logTestMessage}); a != "rtm/publish/ok" {
		t.Fatalf("publish: %s", a)
	}
	if a, _ := sub.next(); a != "rtm/subscription/data" {
		t.Fatalf("subscriber got %s", a)
	}

	bad := dialJSON(t, url, nil)
	badToken := token[:len(token)-4] + "AAAA"
	leaks = append(leaks, badToken)
	if a, _ := bad.call("auth/authenticate", map[string]any{"method": "jwt", "credentials": map[string]any{"token": badToken}}); a != "auth/authenticate/error" {
		t.Fatalf("bad token: %s", a)
	}
	bad.send(logTestGarbage)
	if a, _ := bad.next(); a != "/error" {
		t.Fatalf("garbage frame: %s", a)
	}
	for _, c := range []*jsonConn{pub, sub, bad} {
		c.ws.Close(1000, "")
	}
	poll.Until(t, "three connection-closed lines", func() bool {
		return strings.Count(e.logs.String(), `"msg":"connection closed"`) == 3
	})
	if _, err := e.stop(t); err != nil {
		t.Fatal(err)
	}

	logs := e.logs.String()
	for _, s := range append(leaks, logTestSecret, logTestJWTKey, logTestMessage, logTestGarbage) {
		if strings.Contains(logs, s) {
			t.Errorf("logs contain %q:\n%s", s, logs)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == "connection closed" {
			if _, ok := rec["code"]; !ok || rec["appkey"] != "logs" {
				t.Errorf("connection closed line lacks its code or appkey: %s", line)
			}
		}
	}
	if !strings.Contains(logs, `"msg":"authentication failed"`) {
		t.Errorf("failed authentications are not logged:\n%s", logs)
	}
}

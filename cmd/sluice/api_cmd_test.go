package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
)

// apiTestKey is the API key of the app of apiEdgeConfig.
const apiTestKey = "backend-key-0123456789"

const apiEdgeConfig = `apps:
  - appkey: shop
    api_keys: ["` + apiTestKey + `"]
    roles:
      default: {publish: ["*"], subscribe: ["*"]}
`

// apiEdge is where the edge of startAPIEdge serves.
type apiEdge struct {
	url   string // ws://host:port
	addr  string // the main listener's host:port
	admin string // the admin listener's host:port
}

// startAPIEdge runs `sluice edge` (package edgecmd, in this process) with
// an app that has an API key, and an admin listener.
func startAPIEdge(t *testing.T) apiEdge {
	t.Helper()
	e := edgecmdtest.Start(t, apiEdgeConfig+"admin: {listen: 127.0.0.1:0}\n")
	return apiEdge{url: e.URL, addr: e.Addr, admin: e.Info().Admin}
}

// runSluice runs `sluice args...` in process.
func runSluice(args ...string) (code int, stdout, stderr string) {
	var out, errw bytes.Buffer
	code = run(args, stdio{in: strings.NewReader(`{"channel":"from-stdin","message":7}`), out: &out, errw: &errw})
	return code, out.String(), errw.String()
}

// TestAPICommand: `sluice api` publishes as the app's backend, on the main
// listener and the admin one, and the message is read back over RTM.
func TestAPICommand(t *testing.T) {
	e := startAPIEdge(t)
	code, out, errw := runSluice("api", "--url", e.url, "--api-key", apiTestKey, "publish", `{"channel":"orders","message":{"id":1}}`)
	var pub struct{ Position string }
	if code != 0 || json.Unmarshal([]byte(out), &pub) != nil || pub.Position == "" {
		t.Fatalf("api publish: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	code, out, errw = runSluice("read", "--url", e.url, "--appkey", "shop", "orders")
	if code != 0 || !strings.Contains(out, `"position":"`+pub.Position+`"`) || !strings.Contains(out, `{"id":1}`) {
		t.Fatalf("RTM read after the API publish: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	// The key from the environment, the body from stdin, the admin
	// listener as a bare host:port.
	t.Setenv("SLUICE_API_KEY", apiTestKey)
	if code, out, errw = runSluice("api", "--url", e.admin, "publish", "-"); code != 0 || !strings.Contains(out, `"position"`) {
		t.Fatalf("api publish from stdin on the admin listener: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	if code, out, errw = runSluice("api", "--url", e.url, "read", `{"channel":"from-stdin"}`); code != 0 || !strings.Contains(out, `"message":7`) {
		t.Fatalf("api read: exit %d, stdout %q, stderr %q", code, out, errw)
	}
	if code, out, errw = runSluice("api", "--url", "http://"+e.addr, "info"); code != 0 || !strings.Contains(out, `"appkey":"shop"`) {
		t.Fatalf("api info: exit %d, stdout %q, stderr %q", code, out, errw)
	}
}

// TestAPICommandErrors: a refusal prints the edge's answer and exits 1; a
// call without a key is a usage error.
func TestAPICommandErrors(t *testing.T) {
	e := startAPIEdge(t)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // part of standard output
		stderr string // part of standard error
	}{
		{name: "wrong key", args: []string{"--api-key", "wrong-key-0123456789", "info"}, code: 1,
			stdout: `"error":"authentication_failed"`, stderr: "authentication_failed (HTTP 401): invalid API key"},
		{name: "unknown method", args: []string{"--api-key", apiTestKey, "nope"}, code: 1,
			stdout: `"error":"unknown_method"`, stderr: "HTTP 404"},
		{name: "bad channel", args: []string{"--api-key", apiTestKey, "publish", `{"channel":"","message":1}`}, code: 1,
			stdout: `"error":"invalid_format"`, stderr: "invalid_format (HTTP 400)"},
		{name: "no key", args: []string{"info"}, code: 2, stderr: "no API key"},
		{name: "no method", args: []string{"--api-key", apiTestKey}, code: 2, stderr: "want METHOD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errw := runSluice(append([]string{"api", "--url", e.url}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errw, tt.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, out, errw, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
}

func TestAPIBase(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{name: "ws", in: "ws://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{name: "wss with v2", in: "wss://edge.example.com/v2", want: "https://edge.example.com"},
		{name: "bare", in: "127.0.0.1:9000", want: "http://127.0.0.1:9000"},
		{name: "https kept", in: "https://edge.example.com/", want: "https://edge.example.com"},
		{name: "prefix path kept", in: "https://example.com/sluice/v2?appkey=x", want: "https://example.com/sluice"},
		{name: "other scheme", in: "ftp://h", want: ""},
		{name: "no host", in: "http://", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := apiBase(tt.in)
			if (err != nil) != (tt.want == "") || got != tt.want {
				t.Fatalf("apiBase(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

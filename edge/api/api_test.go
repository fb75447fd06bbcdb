package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/api"
)

// TestAuth: the key names the app, in either header form; a missing or
// wrong key, or headers that name more than one, is 401 with a JSON error
// that names neither app nor key.
func TestAuth(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	tests := []struct {
		name    string
		hdr     func(http.Header)
		wantApp string // "" for a 401
		reason  string // part of the 401's reason
	}{
		{name: "missing", hdr: func(http.Header) {}, reason: "missing API key"},
		{name: "wrong", hdr: func(h http.Header) { h.Set("X-API-Key", "not-a-key-0123456789") }, reason: "invalid API key"},
		{name: "prefix of a key", hdr: func(h http.Header) { h.Set("X-API-Key", alphaKey[:10]) }, reason: "invalid API key"},
		{name: "key and more", hdr: func(h http.Header) { h.Set("X-API-Key", alphaKey+"x") }, reason: "invalid API key"},
		{name: "bearer scheme", hdr: func(h http.Header) { h.Set("Authorization", "Bearer "+alphaKey) }, reason: "missing API key"},
		{name: "empty apikey", hdr: func(h http.Header) { h.Set("Authorization", "apikey ") }, reason: "missing API key"},
		{name: "alpha", hdr: func(h http.Header) { h.Set("X-API-Key", alphaKey) }, wantApp: "alpha"},
		{name: "alpha rotated key", hdr: func(h http.Header) { h.Set("X-API-Key", alphaNewKey) }, wantApp: "alpha"},
		{name: "beta", hdr: func(h http.Header) { h.Set("X-API-Key", betaKey) }, wantApp: "beta"},
		{name: "authorization form", hdr: func(h http.Header) { h.Set("Authorization", "apikey "+betaKey) }, wantApp: "beta"},
		{name: "authorization scheme case", hdr: func(h http.Header) { h.Set("Authorization", "ApiKey "+alphaNewKey) }, wantApp: "alpha"},
		// Credentials that name two keys are refused, never resolved by
		// the order of the headers.
		{name: "two X-API-Key", hdr: func(h http.Header) { h.Add("X-API-Key", alphaKey); h.Add("X-API-Key", betaKey) }, reason: "ambiguous API key"},
		{name: "two X-API-Key, same key", hdr: func(h http.Header) { h.Add("X-API-Key", alphaKey); h.Add("X-API-Key", alphaKey) }, reason: "ambiguous API key"},
		{name: "two X-API-Key, one wrong", hdr: func(h http.Header) { h.Add("X-API-Key", alphaKey); h.Add("X-API-Key", "wrong") }, reason: "ambiguous API key"},
		{name: "two Authorization", hdr: func(h http.Header) {
			h.Add("Authorization", "apikey "+alphaKey)
			h.Add("Authorization", "apikey "+betaKey)
		}, reason: "ambiguous API key"},
		{name: "both forms, different keys", hdr: func(h http.Header) {
			h.Set("X-API-Key", alphaKey)
			h.Set("Authorization", "apikey "+betaKey)
		}, reason: "ambiguous API key"},
		{name: "both forms, one key", hdr: func(h http.Header) {
			h.Set("X-API-Key", betaKey)
			h.Set("Authorization", "apikey "+betaKey)
		}, wantApp: "beta"},
		{name: "X-API-Key beside a bearer token", hdr: func(h http.Header) {
			h.Set("X-API-Key", alphaKey)
			h.Set("Authorization", "Bearer "+betaKey)
		}, wantApp: "alpha"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := e.do(t, http.MethodPost, "info", "{}", tt.hdr)
			if tt.wantApp == "" {
				reason := a.refused(t, http.StatusUnauthorized, "authentication_failed")
				if !strings.Contains(reason, tt.reason) || strings.Contains(reason, "alpha") || strings.Contains(reason, "beta") {
					t.Fatalf("reason %q", reason)
				}
				return
			}
			if a.status != http.StatusOK {
				t.Fatalf("%d %s", a.status, a.raw)
			}
			if got := a.body["app"].(map[string]any)["appkey"]; got != tt.wantApp {
				t.Fatalf("the key named app %v, want %s", got, tt.wantApp)
			}
		})
	}
}

// TestAuthenticate: a key alone names its app as it does in a request;
// anything else (empty, a prefix, a key with more) names none.
func TestAuthenticate(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	for key, want := range map[string]string{
		alphaKey: "alpha", alphaNewKey: "alpha", betaKey: "beta",
		"": "", alphaKey[:10]: "", alphaKey + "x": "", "apikey " + alphaKey: "",
	} {
		got, ok := e.api.Authenticate(key)
		if got != want || ok != (want != "") {
			t.Errorf("Authenticate(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}

// TestRefusals: every refusal of a request is a JSON error body with its
// status.
func TestRefusals(t *testing.T) {
	t.Parallel()
	e := startEdge(t, &api.Options{MaxBodyBytes: 256})
	tests := []struct {
		name, verb, method, body string
		status                   int
		code, reason             string
	}{
		{name: "get", verb: http.MethodGet, method: "publish", status: 405, code: "method_not_allowed"},
		{name: "unknown method", method: "nope", body: "{}", status: 404, code: "unknown_method", reason: `"nope"`},
		{name: "no method", method: "", body: "{}", status: 404, code: "unknown_method", reason: "publish"},
		{name: "too large", method: "publish", body: `{"channel":"c","message":"` + strings.Repeat("x", 300) + `"}`,
			status: 413, code: "request_too_large", reason: "256 bytes"},
		{name: "not json", method: "publish", body: `{"channel":`, status: 400, code: "json_parse_error"},
		{name: "not utf-8", method: "publish", body: "{\"channel\":\"c\xff\",\"message\":1}", status: 400, code: "json_parse_error"},
		{name: "not an object", method: "publish", body: `[1]`, status: 400, code: "invalid_format", reason: "JSON object"},
		{name: "unknown field", method: "publish", body: `{"channel":"c","message":1,"chanel":"d"}`, status: 400, code: "invalid_format", reason: `"chanel"`},
		{name: "key twice", method: "publish", body: `{"channel":"c","channel":"d","message":1}`, status: 400, code: "invalid_format", reason: "twice"},
		{name: "wrong type", method: "publish", body: `{"channel":5,"message":1}`, status: 400, code: "invalid_format", reason: `"channel"`},
		{name: "extra data", method: "publish", body: `{"channel":"c","message":1} {}`, status: 400, code: "json_parse_error"},
		{name: "no message", method: "publish", body: `{"channel":"c"}`, status: 400, code: "invalid_format", reason: "message"},
		{name: "info takes nothing", method: "info", body: `{"x":1}`, status: 400, code: "invalid_format", reason: `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			verb := tt.verb
			if verb == "" {
				verb = http.MethodPost
			}
			a := e.do(t, verb, tt.method, tt.body, func(h http.Header) { h.Set("X-API-Key", alphaKey) })
			reason := a.refused(t, tt.status, tt.code)
			if !strings.Contains(reason, tt.reason) {
				t.Fatalf("reason %q does not say %q", reason, tt.reason)
			}
			if tt.status == 405 && a.header.Get("Allow") != http.MethodPost {
				t.Fatalf("Allow %q", a.header.Get("Allow"))
			}
			if strings.Contains(reason, "api.") || strings.Contains(reason, "Go ") {
				t.Fatalf("reason %q names Go types", reason)
			}
		})
	}
}

// TestMaxBodyDefault: every message an app accepts fits the default body
// limit, JSON-escaped.
func TestMaxBodyDefault(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	// alpha's limit is 1024 bytes: a string of 1000 escaped characters
	// takes 6000 bytes of body but only 1002 of JSON stored.
	msg := strings.Repeat(`\u0041`, 1000)
	got := e.ok(t, "publish", alphaKey, `{"channel":"c","message":"`+msg+`"}`)
	if got["position"] == "" {
		t.Fatalf("answer %v", got)
	}
}

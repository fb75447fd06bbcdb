package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHealth: `sluice health` asks /healthz, or /readyz with --ready,
// of the edge at --url (ws:// meaning the same host over http://), and
// fails unless it answers 200, saying what it answered.
func TestHealth(t *testing.T) {
	t.Parallel()
	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ready\n"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ws := "ws" + strings.TrimPrefix(srv.URL, "http")

	run := func(args ...string) (string, error) {
		var out, errw bytes.Buffer
		err := runHealth(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, errw: &errw})
		return out.String(), err
	}
	if out, err := run("--url", ws); err != nil || out != srv.URL+"/healthz: 200 ok\n" {
		t.Fatalf("health: %q, %v", out, err)
	}
	if _, err := run("--url", ws, "--ready"); err == nil || !strings.Contains(err.Error(), "/readyz: 503 draining") {
		t.Fatalf("health --ready of a draining edge: %v; want its 503 and body", err)
	}
	ready.Store(true)
	if out, err := run("--url", srv.URL, "--ready"); err != nil || out != srv.URL+"/readyz: 200 ready\n" {
		t.Fatalf("health --ready: %q, %v", out, err)
	}
	if _, err := run("--url", "ftp://x"); !errors.Is(err, errUsage) {
		t.Fatalf("health --url ftp://x: %v, want a usage error", err)
	}
}

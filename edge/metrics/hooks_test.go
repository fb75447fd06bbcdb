package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/metrics"
	"github.com/sluicehq/sluice/edge/server"
)

// TestHookAndAPIMetrics: a connect hook (a real HTTP server) that denies
// shows in sluice_hook_calls_total, and API requests in
// sluice_api_requests_total.
func TestHookAndAPIMetrics(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"allow":false}`))
	}))
	defer backend.Close()
	m := metrics.New("test")
	srv, err := server.New(&server.Options{
		Apps: []*app.App{{Key: "k", APIKeys: []string{"api-key-0123456789"}, Roles: map[string]*app.Role{"default": {Name: "default"}},
			Hooks: &hook.Config{Connect: backend.URL, Secret: "hook-secret-0123456789"}}},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown(context.Background())
	h := api.New(srv, nil)
	if err := m.Watch(srv); err != nil {
		t.Fatal(err)
	}
	if err := m.WatchAPI(h); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v2?appkey=k", nil))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("upgrade with a denying connect hook: %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest(http.MethodPost, "/api/info", strings.NewReader(`{}`))
	req.Header.Set("X-API-Key", "api-key-0123456789")
	h.ServeHTTP(httptest.NewRecorder(), req)
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, want := range []string{
		`sluice_hook_calls_total{app="k",hook="connect",outcome="denied"} 1`,
		`sluice_hook_calls_total{app="k",hook="publish",outcome="failed"} 0`,
		`sluice_api_requests_total{app="k",code="ok",method="info"} 1`,
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

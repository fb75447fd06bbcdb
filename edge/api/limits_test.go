package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/api"
)

func TestRateLimitPerApp(t *testing.T) {
	t.Parallel()
	// One request a second with a burst of 3, on a clock that moves only
	// when the test says: the fourth is refused, and a second later one
	// more is allowed.
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	e := startEdge(t, &api.Options{RequestsPerSecond: 1, RequestBurst: 3, Now: clk.now})
	for range 3 {
		e.ok(t, "info", alphaKey, `{}`)
	}
	a := e.call(t, "info", alphaKey, `{}`)
	reason := a.refused(t, http.StatusTooManyRequests, "too_many_requests")
	if !strings.Contains(reason, "limits.api_requests_per_second") || a.header.Get("Retry-After") == "" {
		t.Fatalf("429 reason %q, Retry-After %q", reason, a.header.Get("Retry-After"))
	}
	// Each app has its own bucket.
	e.ok(t, "info", betaKey, `{}`)
	clk.add(time.Second)
	e.ok(t, "info", alphaKey, `{}`)
	e.call(t, "info", alphaKey, `{}`).refused(t, http.StatusTooManyRequests, "too_many_requests")
	// A wrong key is refused before the limit, and not counted in it.
	e.call(t, "info", "wrong-key-0123456789", `{}`).refused(t, http.StatusUnauthorized, "authentication_failed")
}

func TestRequestCounts(t *testing.T) {
	t.Parallel()
	counted := startEdge(t, nil)
	h := counted.api
	counted.ok(t, "publish", alphaKey, `{"channel":"c","message":1}`)
	counted.ok(t, "publish", alphaKey, `{"channel":"c","message":2}`)
	counted.call(t, "publish", alphaKey, `{"channel":"","message":1}`).refused(t, http.StatusBadRequest, "invalid_format")
	counted.call(t, "nosuch", alphaKey, `{}`).refused(t, http.StatusNotFound, "unknown_method")
	counted.call(t, "info", "", `{}`).refused(t, http.StatusUnauthorized, "authentication_failed")
	want := []api.RequestCount{
		{App: "", Method: "info", Code: "authentication_failed", Count: 1},
		{App: "alpha", Method: "publish", Code: "invalid_format", Count: 1},
		{App: "alpha", Method: "publish", Code: "ok", Count: 2},
		{App: "alpha", Method: "unknown", Code: "unknown_method", Count: 1},
	}
	got := h.Stats()
	if len(got) != len(want) {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("counts = %+v, want %+v", got, want)
		}
	}
}

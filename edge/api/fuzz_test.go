package api_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/api"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/store"
)

// FuzzRequest feeds arbitrary bodies to every method: the answer is always
// a JSON object, a success or a refusal with a code and a reason, never a
// panic nor a 500. The decoding is encoding/json (unknown fields refused)
// behind the RTM JSON codec, itself fuzzed in shared/codec/json.
func FuzzRequest(f *testing.F) {
	for _, seed := range []string{
		`{"channel":"c","message":{"a":[1,2.5,"x",null,true]}}`,
		`{"channels":["a","b"],"message":1,"idempotency_key":"k"}`,
		`{"channel":"c","position":"1:2"}`, `{"channel":"c","after":"ann","limit":2}`,
		`{"user":"alice","reason":"banned"}`, `{"connection":"x.1","channel":"c"}`,
		`{}`, ``, `[]`, `{"channel":"c","channel":"d"}`, "{\"channel\":\"\xff\"}",
	} {
		for _, m := range []string{"publish", "broadcast", "read", "info", "history", "channels", "disconnect", "unsubscribe", "presence", "presence_stats"} {
			f.Add(m, seed)
		}
	}
	srv, err := server.New(&server.Options{
		Apps:         testApps(),
		Logger:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		StoreOptions: &store.Options{SweepInterval: -1},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	h := api.New(srv, &api.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	f.Fuzz(func(t *testing.T, method, body string) {
		req := httptest.NewRequest(http.MethodPost, "/api/", strings.NewReader(body))
		req.URL.Path += method // any bytes, as a raw request line may carry
		req.Header.Set("X-API-Key", alphaKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var out map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("answer %d %q is not a JSON object: %v", rec.Code, rec.Body, err)
		}
		if rec.Code >= 500 {
			t.Fatalf("body %q: %d %s", body, rec.Code, rec.Body)
		}
		if rec.Code != http.StatusOK && (out["error"] == nil || out["reason"] == nil) {
			t.Fatalf("refusal %d %s has no error and reason", rec.Code, rec.Body)
		}
	})
}

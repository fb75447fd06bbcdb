package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/api"
)

// TestIdempotentPublish: a retry with the same key within the window
// stores nothing and answers the first position; after the window, or
// with another key, it stores again.
func TestIdempotentPublish(t *testing.T) {
	t.Parallel()
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	e := startEdge(t, &api.Options{IdempotencyWindow: time.Minute, Now: clk.now})
	const body = `{"channel":"c","message":{"order":1},"idempotency_key":"order-1"}`
	first := position(t, e.ok(t, "publish", alphaKey, body))
	retry := position(t, e.ok(t, "publish", alphaKey, body))
	if retry != first {
		t.Fatalf("retry answered %s, first %s", retry, first)
	}
	// Stored once: the next message takes the next offset.
	next := position(t, e.ok(t, "publish", alphaKey, `{"channel":"c","message":"next"}`))
	if next.Offset != first.Offset+1 {
		t.Fatalf("after a retry the next publish is at %s, first at %s: the retry was stored", next, first)
	}
	// The same key of another app is another key.
	position(t, e.ok(t, "publish", betaKey, body))
	// The same key for another request is refused.
	reason := e.call(t, "publish", alphaKey, `{"channel":"c","message":{"order":2},"idempotency_key":"order-1"}`).
		refused(t, http.StatusUnprocessableEntity, "idempotency_key_reused")
	if !strings.Contains(reason, "different request") {
		t.Fatalf("reason %q", reason)
	}
	// Key order and spacing do not make another request.
	if p := position(t, e.ok(t, "publish", alphaKey, `{"idempotency_key":"order-1", "message":{"order" : 1},"channel":"c"}`)); p != first {
		t.Fatalf("a reordered retry answered %s, first %s", p, first)
	}
	clk.add(time.Minute)
	if p := position(t, e.ok(t, "publish", alphaKey, body)); p.Offset != next.Offset+1 {
		t.Fatalf("after the window a retry answered %s: want a new message after %s", p, next)
	}
	long := `{"channel":"c","message":1,"idempotency_key":"` + strings.Repeat("k", api.MaxIdempotencyKeyBytes+1) + `"}`
	e.call(t, "publish", alphaKey, long).refused(t, 400, "invalid_format")
}

// TestIdempotentConcurrentRetries: retries racing the first request all
// get its answer, and the message is stored once.
func TestIdempotentConcurrentRetries(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	const n = 16
	positions := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			positions[i], errs[i] = publishRaw(e.url, `{"channel":"race","message":"once","idempotency_key":"k"}`)
		}()
	}
	wg.Wait()
	for i, p := range positions {
		if errs[i] != nil || p == "" || p != positions[0] {
			t.Fatalf("retry %d answered %q (%v), retry 0 %q", i, p, errs[i], positions[0])
		}
	}
	first := position(t, map[string]any{"position": positions[0]})
	next := position(t, e.ok(t, "publish", alphaKey, `{"channel":"race","message":"next"}`))
	if next.Offset != first.Offset+1 {
		t.Fatalf("next publish at %s after %s: the retries were stored", next, first)
	}
}

// TestIdempotentBroadcast: a broadcast retried stores nothing again and
// answers the first results; a refused publish is not remembered, so its
// retry runs anew.
func TestIdempotentBroadcast(t *testing.T) {
	t.Parallel()
	e := startEdge(t, nil)
	const body = `{"channels":["x","y"],"message":1,"idempotency_key":"b"}`
	first := e.call(t, "broadcast", alphaKey, body)
	retry := e.call(t, "broadcast", alphaKey, body)
	if first.status != 200 || retry.raw != first.raw {
		t.Fatalf("retry answered %s, first %s", retry.raw, first.raw)
	}
	for _, ch := range []string{"x", "y"} {
		next := position(t, e.ok(t, "publish", alphaKey, `{"channel":"`+ch+`","message":2}`))
		if next.Offset != 2 {
			t.Fatalf("%s's next message is at %s: the retry was stored", ch, next)
		}
	}
	tooLarge := `{"channel":"z","message":"` + strings.Repeat("x", 1100) + `","idempotency_key":"big"}`
	e.call(t, "publish", alphaKey, tooLarge).refused(t, 400, "message_too_large")
	e.call(t, "publish", alphaKey, tooLarge).refused(t, 400, "message_too_large")
}

// TestIdempotencyBound: past IdempotencyKeys the oldest key is forgotten.
func TestIdempotencyBound(t *testing.T) {
	t.Parallel()
	e := startEdge(t, &api.Options{IdempotencyKeys: 2})
	pub := func(key string) string {
		return e.ok(t, "publish", alphaKey, `{"channel":"c","message":1,"idempotency_key":"`+key+`"}`)["position"].(string)
	}
	a, b := pub("a"), pub("b")
	if pub("b") != b {
		t.Fatal("b was forgotten with room for it")
	}
	pub("c") // forgets a, the oldest
	if pub("a") == a {
		t.Fatal("a was remembered past the bound")
	}
}

// publishRaw publishes as alpha from any goroutine and returns the
// position answered.
func publishRaw(url, body string) (string, error) {
	req, err := http.NewRequest(http.MethodPost, url+"/api/publish", strings.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-API-Key", alphaKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Position string `json:"position"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return out.Position, nil
}

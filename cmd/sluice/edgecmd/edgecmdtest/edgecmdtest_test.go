package edgecmdtest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStart: the edge serves on a port of its own, says so in its
// banner, and is stopped by the cleanup or sooner.
func TestStart(t *testing.T) {
	e := Start(t, "apps:\n  - appkey: test-app\nlimits: {drain_delay: 0s}\n")
	if !strings.HasPrefix(e.URL, "ws://127.0.0.1:") || e.AppKey != "test-app" || e.URL != "ws://"+e.Addr {
		t.Fatalf("url %q, addr %q, appkey %q", e.URL, e.Addr, e.AppKey)
	}
	if out := e.Stdout.String(); !strings.Contains(out, "  url:    "+e.URL+"\n") {
		t.Errorf("banner:\n%s", out)
	}
	resp, err := http.Get("http://" + e.Addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz %d", resp.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + e.Addr + "/readyz"); err == nil {
		t.Fatal("the edge serves after Shutdown")
	}
}

// Package servertest serves real edges on loopback ports for tests: an
// edge alone, or one whose log of record is a journal (edge/journal).
// Everything it starts stops when the test ends.
package servertest

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
)

// Edge is an edge behind a real HTTP server on a loopback port.
type Edge struct {
	Server *server.Server
	HTTP   *httptest.Server
	URL    string // ws://127.0.0.1:PORT
}

// Start serves an edge with opts (a nil Logger: quiet). With j, the edge
// is j's: its store is fed from j's stream, and Start returns once the
// feed has caught up (the edge is ready).
func Start(t testing.TB, opts *server.Options, j *journal.Journal) *Edge {
	t.Helper()
	o := *opts
	if o.Logger == nil {
		o.Logger = journaltest.Logger()
	}
	if j != nil {
		o.Journal = j
	}
	srv, err := server.New(&o)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	if j != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := j.Start(ctx, srv.Store()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-j.CaughtUp():
		case <-ctx.Done():
			t.Fatal("the journal's feed did not catch up within 30s")
		}
	}
	hs := httptest.NewServer(srv)
	// Registered after the journal's cleanup, so it runs before it: the
	// edge drains while its journal still answers.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		hs.Close()
	})
	return &Edge{Server: srv, HTTP: hs, URL: "ws" + strings.TrimPrefix(hs.URL, "http")}
}

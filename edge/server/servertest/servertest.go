// Package servertest serves real edges on loopback ports for tests: an
// edge alone, one whose log of record is a journal (edge/journal), or one
// behind a handler of the test's (the server API or /metrics beside RTM).
// Everything it starts stops when the test ends: the edge drains
// (Server.Shutdown), then its HTTP server closes.
//
// A test of package server itself cannot import it (an import cycle);
// its external tests (package server_test) do, as do other packages'.
package servertest

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
)

// Edge is an edge behind a real HTTP server on a loopback port.
type Edge struct {
	Server *server.Server
	HTTP   *httptest.Server // HTTP.URL is http://127.0.0.1:PORT
	URL    string           // ws://127.0.0.1:PORT
}

// Options are how Start serves the edge; nil means the defaults of each
// field.
type Options struct {
	// Journal, when set, is the edge's log of record: its store is fed
	// from the journal's stream, and Start returns once the feed has
	// caught up (the edge is ready). Default: none, the edge's memory.
	Journal *journal.Journal
	// Partitions, when set instead of Journal, are the journals of a log
	// in partitions, in partition order, fed and awaited as Journal is.
	Partitions []*journal.Journal
	// JournalAs, when set, is what the edge sees of Journal, which still
	// feeds its store: a test's stand-in for a log whose leader answers
	// late or stale. Default: Journal itself.
	JournalAs func(chanlog.Journal) chanlog.Journal
	// Handler, when set, is what the HTTP server serves, built around the
	// edge (which serves RTM at /v2), e.g. a mux adding the server API or
	// /metrics, as `sluice edge` does. Default: the edge alone.
	Handler func(*server.Server) http.Handler
	// Listener, when set, wraps the HTTP server's listener, e.g. to shrink
	// the send buffer of accepted sockets (SendBuffer). Default: the plain
	// listener.
	Listener func(net.Listener) net.Listener
}

// Start serves an edge with opts (nil: no apps; a nil Logger: quiet) as
// o says.
func Start(t testing.TB, opts *server.Options, o *Options) *Edge {
	t.Helper()
	var so server.Options
	if opts != nil {
		so = *opts
	}
	if so.Logger == nil {
		so.Logger = journaltest.Logger()
	}
	if o == nil {
		o = &Options{}
	}
	parts := o.Partitions
	if o.Journal != nil {
		parts = []*journal.Journal{o.Journal}
	}
	for _, j := range parts {
		var cj chanlog.Journal = j
		if o.JournalAs != nil {
			cj = o.JournalAs(j)
		}
		so.Journals = append(so.Journals, cj)
	}
	srv, err := server.New(&so)
	if err != nil {
		t.Fatalf("server.New: %v", err)
	}
	for _, j := range parts {
		awaitFeed(t, j, srv)
	}
	var h http.Handler = srv
	if o.Handler != nil {
		h = o.Handler(srv)
	}
	hs := httptest.NewUnstartedServer(h)
	if o.Listener != nil {
		hs.Listener = o.Listener(hs.Listener)
	}
	hs.Start()
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

// awaitFeed starts j feeding srv's store and waits until it has caught up.
func awaitFeed(t testing.TB, j *journal.Journal, srv *server.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Start(ctx, srv.Store()); err != nil {
		srv.Shutdown(context.Background())
		t.Fatal(err)
	}
	select {
	case <-j.CaughtUp():
	case <-ctx.Done():
		srv.Shutdown(context.Background())
		t.Fatal("the journal's feed did not catch up within 30s")
	}
}

// SendBuffer is an Options.Listener that sets the send buffer
// (SO_SNDBUF) of every accepted socket to size bytes, so that a client
// that does not read fills the socket after a few kilobytes rather than
// the megabytes loopback autotuning grows to.
func SendBuffer(size int) func(net.Listener) net.Listener {
	return func(ln net.Listener) net.Listener { return &sendBufferListener{Listener: ln, size: size} }
}

type sendBufferListener struct {
	net.Listener
	size int
}

func (l *sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		// An error here must not stop the HTTP server's accept loop; a
		// test relying on the small buffer fails on its own without it.
		_ = tc.SetWriteBuffer(l.size)
	}
	return c, nil
}

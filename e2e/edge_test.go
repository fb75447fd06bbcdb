// Package e2e tests Sluice end to end: real edges on loopback ports, the
// Go client, and (elsewhere) real browsers. An edge runs in process,
// either the bare server (startEdge, on a fake clock) or the whole of
// `sluice edge` from a config (startCmdEdge, package edgecmd), or as the
// sluice binary's process where a test signals, kills or restarts it, or
// checks its exit code (startEdgeProcess). Nothing here is a fake of the
// edge: the client's behaviour is checked against the real one.
package e2e

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/edge/store/storetest"
	"github.com/sluicehq/sluice/edge/tls/acmetest"
)

func TestMain(m *testing.M) {
	// The in-process ACME CA of tls_test.go keeps a goroutine by design.
	goleak.VerifyTestMain(m, append(acmetest.IgnoreLeaks(), goleak.Cleanup(cleanupBinary))...)
}

const (
	pubSecret = "publisher-secret"
	jwtSecret = "e2e-jwt-secret-of-at-least-32-bytes"
)

// e2eApp: the default role may only subscribe; "publisher" (role_secret)
// may also publish; tokens are signed with jwtSecret. Channels starting
// with "short." keep their messages 10 s with a 1 s grace and no history,
// so a test can expire them with the fake clock.
func e2eApp() *app.App {
	return &app.App{
		Key: "e2e",
		Roles: map[string]*app.Role{
			"default":   {Name: "default", Permissions: app.Permissions{Subscribe: []string{"*"}}},
			"publisher": {Name: "publisher", Secret: pubSecret, Permissions: app.Permissions{Publish: []string{"*"}, Subscribe: []string{"*"}}},
		},
		JWT: &app.JWTKey{Secret: []byte(jwtSecret)},
		Channels: []app.ChannelRule{{
			Pattern:   "short.*",
			Retention: store.Retention{TTL: shortTTL, Grace: shortGrace, HistoryCount: -1},
		}},
	}
}

// Retention of the "short.*" channels of e2eApp.
const (
	shortTTL   = 10 * time.Second
	shortGrace = time.Second
)

// fakeClock is the store clock of an edge, moved by hand.
type fakeClock = storetest.Clock

// edge is a real edge, in process, behind a real HTTP server on a loopback
// port. Its store runs on a fake clock without background sweeper: a test
// expires messages with clock.Advance and srv.Store().Sweep().
type edge struct {
	srv   *server.Server
	clock *fakeClock
	url   string // ws://127.0.0.1:PORT
}

// edgeConfig adjusts an edge before it starts.
type edgeConfig struct {
	mutate func(*server.Options)
	// sendBuffer, when positive, is the SO_SNDBUF of the edge's accepted
	// sockets, so that a client that stops reading blocks the edge's
	// writer after a few kilobytes instead of megabytes of kernel buffers.
	sendBuffer int
}

// startEdge starts an edge serving e2eApp; it shuts down when the test
// ends.
func startEdge(t *testing.T) *edge {
	t.Helper()
	return startEdgeWith(t, edgeConfig{})
}

// startEdgeWith starts an edge with cfg.
func startEdgeWith(t *testing.T, cfg edgeConfig) *edge {
	t.Helper()
	clock := storetest.NewClock(time.Unix(1_700_000_000, 0))
	opts := &server.Options{
		Apps:         []*app.App{e2eApp()},
		StoreOptions: &store.Options{Clock: clock, SweepInterval: -1},
		Logger:       quietLogger(),
	}
	if cfg.mutate != nil {
		cfg.mutate(opts)
	}
	var o servertest.Options
	if cfg.sendBuffer > 0 {
		o.Listener = servertest.SendBuffer(cfg.sendBuffer)
	}
	e := servertest.Start(t, opts, &o)
	return &edge{srv: e.Server, clock: clock, url: e.URL}
}

// hostPort returns the edge's host:port, for a proxy in front of it.
func (e *edge) hostPort() string { return strings.TrimPrefix(e.url, "ws://") }

// expire moves the edge's clock by d and runs an expiry pass.
func (e *edge) expire(d time.Duration) {
	e.clock.Advance(d)
	e.srv.Store().Sweep()
}

// quietLogger discards logs.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

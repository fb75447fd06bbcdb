// Package edgecmdtest runs `sluice edge` in a test's process: an
// edgecmd.Edge, configured by a YAML file as an operator writes one, on a
// loopback port, stopped when the test ends. It is the whole edge the
// binary runs (listeners, TLS, drain, durability, web, metrics), not the
// bare server of edge/server/servertest; what it cannot show is the
// process itself: signals, exit codes, SIGKILL.
//
// A test of package edgecmd itself cannot import it (an import cycle).
package edgecmdtest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/internal/syncbuf"
)

// Edge is an edge started by Start.
type Edge struct {
	*edgecmd.Edge
	URL    string  // the RTM endpoint: ws://127.0.0.1:PORT, or wss://
	Addr   string  // the main listener's host:port
	AppKey string  // the first app's appkey
	Stdout *Output // the banner
	Stderr *Output // the logs
}

// Config loads yaml as the edge's configuration file, written in a
// directory of its own against which its relative paths resolve; listen
// is 127.0.0.1:0 unless yaml sets it.
func Config(t testing.TB, yaml string) *edgecmd.Config {
	t.Helper()
	cfg, err := edgecmd.LoadConfig(WriteConfig(t, yaml))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	return cfg
}

// WriteConfig writes yaml as a configuration file in a directory of its
// own, removed when the test ends, and returns its path: for a test of
// `sluice edge --config`.
func WriteConfig(t testing.TB, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "edge.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Start starts an edge configured by yaml (see Config) and returns once
// it serves. See StartConfig.
func Start(t testing.TB, yaml string) *Edge {
	t.Helper()
	return StartConfig(t, Config(t, yaml), nil)
}

// StartConfig starts an edge with cfg and opts (nil: the defaults) and
// returns once it serves; Stdout and Stderr of opts are replaced by the
// Edge's. The test's cleanup closes the edge (Close: no drain delay),
// fails the test if the edge stopped with an error, and logs what the
// edge printed when the test failed. Stop it sooner with Shutdown or
// Close.
func StartConfig(t testing.TB, cfg *edgecmd.Config, opts *edgecmd.Options) *Edge {
	t.Helper()
	var o edgecmd.Options
	if opts != nil {
		o = *opts
	}
	e := &Edge{Stdout: &Output{}, Stderr: &Output{}}
	o.Stdout, o.Stderr = e.Stdout, e.Stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	if e.Edge, err = edgecmd.Start(ctx, cfg, &o); err != nil {
		t.Fatalf("start the edge: %v\n%s", err, e.Stderr)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("the edge stopped with %v", err)
		}
		if t.Failed() {
			t.Logf("edge on %s\nstdout:\n%s\nstderr:\n%s", e.URL, e.Stdout, e.Stderr)
		}
	})
	info := e.Info()
	e.URL, e.Addr = info.URL, info.Listen
	if len(info.AppKeys) > 0 {
		e.AppKey = info.AppKeys[0]
	}
	return e
}

// Output collects what the edge writes to a stream; safe for the edge's
// goroutines and the test's reads.
type Output = syncbuf.Buffer

package edgecmd

import (
	"bufio"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDeployFiles checks the example configuration under deploy/: it
// loads, and its drain ends before systemd's stop timeout in the unit.
// (package main's TestDeployCommandLine parses the unit's command line.)
func TestDeployFiles(t *testing.T) {
	t.Parallel()
	const example = "../../../deploy/edge.yaml"
	c, err := LoadConfig(example)
	if err != nil {
		t.Fatalf("deploy/edge.yaml: %v", err)
	}
	if !c.TLS.enabled() || c.ListenAddr() != ":443" || c.TLS.httpListen() != ":80" || c.Admin.Listen != "127.0.0.1:9090" {
		t.Fatalf("deploy/edge.yaml: tls %+v, listen %q, admin %q", c.TLS, c.ListenAddr(), c.Admin.Listen)
	}
	// A public host's example restricts origins, so the edge it starts
	// stays safe when the app adds a cookie-based connect hook.
	if len(c.AllowedOrigins) == 0 || slices.Contains(c.AllowedOrigins, "*") {
		t.Fatalf("deploy/edge.yaml: allowed_origins %q, want the app's hosts", c.AllowedOrigins)
	}
	if ws := c.exposureWarnings(); len(ws) != 0 {
		t.Fatalf("deploy/edge.yaml warns of its exposure: %q", ws)
	}

	f, err := os.Open("../../../deploy/sluice.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stopTimeout time.Duration
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "TimeoutStopSec="); ok {
			if stopTimeout, err = time.ParseDuration(v + "s"); err != nil {
				t.Fatalf("TimeoutStopSec=%s: %v", v, err)
			}
		}
	}
	// systemd kills the edge TimeoutStopSec after SIGTERM: the drain
	// (delay, then closing within the shutdown timeout) must end first.
	if drain := c.Limits.drainDelay() + c.Limits.shutdownTimeout(); stopTimeout <= drain {
		t.Fatalf("TimeoutStopSec %v is not longer than the drain of deploy/edge.yaml (%v)", stopTimeout, drain)
	}
}

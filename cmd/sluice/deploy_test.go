package main

import (
	"bufio"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// TestDeployFiles checks that the example configuration and the systemd
// unit under deploy/ work with this binary: the file loads, and the unit's
// command line parses with it.
func TestDeployFiles(t *testing.T) {
	t.Parallel()
	const example = "../../deploy/edge.yaml"
	c, err := LoadConfig(example)
	if err != nil {
		t.Fatalf("deploy/edge.yaml: %v", err)
	}
	if !c.TLS.enabled() || c.ListenAddr() != ":443" || c.TLS.httpListen() != ":80" || c.Admin.Listen != "127.0.0.1:9090" {
		t.Fatalf("deploy/edge.yaml: tls %+v, listen %q, admin %q", c.TLS, c.ListenAddr(), c.Admin.Listen)
	}

	f, err := os.Open("../../deploy/sluice.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var args []string
	var stopTimeout time.Duration
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if line, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			args = strings.Fields(line)
		}
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
	if len(args) < 2 || !strings.HasSuffix(args[0], "/sluice") || args[1] != "edge" {
		t.Fatalf("ExecStart runs %q, want sluice edge ...", args)
	}
	for i, a := range args {
		if a == "/etc/sluice/edge.yaml" {
			args[i] = example // where the unit's config is installed from
		}
	}
	cfg, err := edgeConfig(args[2:], stdio{in: strings.NewReader(""), out: io.Discard, errw: io.Discard})
	if err != nil {
		t.Fatalf("the unit's command line: %v", err)
	}
	if cfg.TLS.CertDir != "/var/lib/sluice/certs" {
		t.Fatalf("cert dir %q, want the unit's state directory", cfg.TLS.CertDir)
	}
	if cfg.Cluster.DataDir != "/var/lib/sluice/data" || !cfg.durable() {
		t.Fatalf("data dir %q, want a durable edge in the unit's state directory", cfg.Cluster.DataDir)
	}
}

package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDeployCommandLine checks that the systemd unit under deploy/ works
// with this binary: its command line parses, with the example
// configuration. (edgecmd's TestDeployFiles checks that configuration.)
func TestDeployCommandLine(t *testing.T) {
	t.Parallel()
	const example = "../../deploy/edge.yaml"
	f, err := os.Open("../../deploy/sluice.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var args []string
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if line, ok := strings.CutPrefix(sc.Text(), "ExecStart="); ok {
			args = strings.Fields(line)
		}
	}
	if len(args) < 2 || !strings.HasSuffix(args[0], "/sluice") || args[1] != "edge" {
		t.Fatalf("ExecStart runs %q, want sluice edge ...", args)
	}
	for i, a := range args {
		if a == "/etc/sluice/edge.yaml" {
			args[i] = example // where the unit's config is installed from
		}
	}
	cfg, _, err := edgeConfig(args[2:], stdio{in: strings.NewReader(""), out: io.Discard, errw: io.Discard})
	if err != nil {
		t.Fatalf("the unit's command line: %v", err)
	}
	if cfg.TLS.CertDir != "/var/lib/sluice/certs" {
		t.Fatalf("cert dir %q, want the unit's state directory", cfg.TLS.CertDir)
	}
	if cfg.Cluster.DataDir != "/var/lib/sluice/data" {
		t.Fatalf("data dir %q, want a durable edge in the unit's state directory", cfg.Cluster.DataDir)
	}
}

// repoPath is a path in the repository named in a comment, such as
// docs/configuration.md or cmd/sluice/edgecmd/config*.go; an absolute
// path (/etc/sluice/edge.yaml) is the host's, not one of these.
var repoPath = regexp.MustCompile("(?:^|[\\s(`])((?:[\\w.-]+/)+[\\w.*-]+\\.(?:go|md|yaml|service))")

// TestDeployFilesNameRealFiles: the files the deployment examples send
// their reader to exist (deploy/edge.yaml once named a config.go that
// did not).
func TestDeployFilesNameRealFiles(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"edge.yaml", "sluice.service"} {
		data, err := os.ReadFile("../../deploy/" + name)
		if err != nil {
			t.Fatal(err)
		}
		found := 0
		for _, m := range repoPath.FindAllStringSubmatch(string(data), -1) {
			found++
			if got, _ := filepath.Glob(filepath.Join("../..", m[1])); len(got) == 0 {
				t.Errorf("deploy/%s names %s, which does not exist", name, m[1])
			}
		}
		if name == "edge.yaml" && found == 0 {
			t.Errorf("deploy/edge.yaml names no file of the repository: where are its keys documented?")
		}
	}
}

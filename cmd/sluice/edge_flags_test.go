package main

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/internal/testcert"
)

func TestOpsFlagsOverrideConfig(t *testing.T) {
	t.Parallel()
	c := edgecmd.DefaultConfig()
	c.TLS = edgecmd.TLSConfig{Domains: []string{"edge.example.com"}, Email: "ops@example.com", HTTPListen: "0.0.0.0:8080"}
	c.Admin.Listen = "127.0.0.1:9090"
	var o opsFlags
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o.register(fs)
	err := fs.Parse([]string{"--domain", "x.example.com", "--domain", "y.example.com", "--email", "me@example.com",
		"--acme-ca", "https://ca.example/dir", "--acme-ca-root", "/r.pem", "--cert-dir", "/certs",
		"--http-listen", "off", "--admin-listen", "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	o.apply(c)
	if !reflect.DeepEqual(c.TLS.Domains, []string{"x.example.com", "y.example.com"}) || c.TLS.Email != "me@example.com" ||
		c.TLS.ACMECA != "https://ca.example/dir" || c.TLS.ACMECARoot != "/r.pem" || c.TLS.CertDir != "/certs" ||
		c.TLS.HTTPListen != "off" || c.Admin.Listen != "127.0.0.1:1" {
		t.Fatalf("after flags: tls %+v, admin %+v", c.TLS, c.Admin)
	}
}

// TestClusterTLSFlags: the --cluster-tls-* flags set cluster.tls, which
// lets a node take routes from other hosts without a token; without
// them the same command line is refused.
func TestClusterTLSFlags(t *testing.T) {
	t.Setenv("SLUICE_CLUSTER_TOKEN", "") // the test's own environment decides
	ca := testcert.NewCA(t, "cluster CA")
	cert, key := ca.Issue(t, "n0")
	s := stdio{in: strings.NewReader(""), out: io.Discard, errw: io.Discard}
	node := []string{"--data-dir", t.TempDir(), "--cluster-name", "c", "--cluster-listen", "10.0.0.5:6222",
		"--cluster-routes", "nats-route://10.0.0.5:6222,nats-route://10.0.0.6:6222"}
	cfg, _, err := edgeConfig(append(node, "--cluster-tls-cert", cert, "--cluster-tls-key", key, "--cluster-tls-ca", ca.CertFile), s)
	if err != nil {
		t.Fatalf("a node with route TLS flags: %v", err)
	}
	if want := (edgecmd.ClusterTLSConfig{CertFile: cert, KeyFile: key, CAFile: ca.CertFile}); cfg.Cluster.TLS != want {
		t.Fatalf("cluster.tls %+v, want %+v", cfg.Cluster.TLS, want)
	}
	if _, _, err := edgeConfig(node, s); err == nil || !strings.Contains(err.Error(), "cluster.tls") {
		t.Fatalf("the node without route TLS nor a token: %v", err)
	}
	if _, _, err := edgeConfig(append(node, "--cluster-tls-cert", cert), s); err == nil || !strings.Contains(err.Error(), "missing key_file, ca_file") {
		t.Fatalf("--cluster-tls-cert alone: %v", err)
	}
}

// TestFlagsCompleteConfigFile: the file and the flags are checked
// together, so a flag may supply what the file's cluster section needs:
// --data-dir, or the --cluster-tls-* that let it take routes from other
// hosts without a token. The same file alone is refused.
func TestFlagsCompleteConfigFile(t *testing.T) {
	t.Setenv("SLUICE_CLUSTER_TOKEN", "") // the test's own environment decides
	s := stdio{in: strings.NewReader(""), out: io.Discard, errw: io.Discard}
	dir := t.TempDir()
	path := filepath.Join(dir, "edge.yaml")
	section := "cluster:\n  name: c\n  listen: 10.0.0.5:6222\n  routes: [nats-route://10.0.0.5:6222, nats-route://10.0.0.6:6222]\n"
	if err := os.WriteFile(path, []byte(section), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := edgeConfig([]string{"--config", path}, s); err == nil || !strings.Contains(err.Error(), "needs data_dir (--data-dir)") {
		t.Fatalf("the file alone: %v", err)
	}
	data := filepath.Join(dir, "data")
	if _, _, err := edgeConfig([]string{"--config", path, "--data-dir", data}, s); err == nil || !strings.Contains(err.Error(), "cluster.tls") {
		t.Fatalf("the file and --data-dir, routes from other hosts with neither a token nor TLS: %v", err)
	}
	ca := testcert.NewCA(t, "cluster CA")
	cert, key := ca.Issue(t, "n0")
	cfg, _, err := edgeConfig([]string{"--config", path, "--data-dir", data,
		"--cluster-tls-cert", cert, "--cluster-tls-key", key, "--cluster-tls-ca", ca.CertFile}, s)
	if err != nil {
		t.Fatalf("the file completed by --data-dir and --cluster-tls-*: %v", err)
	}
	if cfg.Cluster.DataDir != data || cfg.Cluster.Name != "c" || cfg.Cluster.TLS.CertFile != cert {
		t.Fatalf("cluster %+v: want the file's section with the flags' data_dir and tls", cfg.Cluster)
	}
}

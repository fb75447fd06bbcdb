package main

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
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
	ca := journaltest.NewCA(t, "cluster CA")
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

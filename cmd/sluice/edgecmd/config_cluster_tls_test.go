package edgecmd

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/testcert"
)

// clusterTLSConfig is a cluster node on another host's reach, with route
// TLS and no token.
const clusterTLSConfig = `
cluster:
  data_dir: data
  name: c
  listen: 10.0.0.5:6222
  routes: [nats-route://10.0.0.5:6222, nats-route://10.0.0.6:6222]
  tls:
    cert_file: n0.pem
    key_file: n0-key.pem
    ca_file: ca.pem
`

// writeBeside writes a config file in the directory of the CA's files,
// so that it names them by relative paths.
func writeBeside(t *testing.T, ca *testcert.CA, text string) string {
	t.Helper()
	path := filepath.Join(filepath.Dir(ca.CertFile), "sluice.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestClusterTLS: the cluster.tls keys load, relative to the config
// file, into the node's route TLS; with them, routes on another host's
// reach need no token.
func TestClusterTLS(t *testing.T) {
	t.Setenv("SLUICE_CLUSTER_TOKEN", "") // the test's own environment decides
	ca := testcert.NewCA(t, "cluster CA")
	ca.Issue(t, "n0")
	path := writeBeside(t, ca, clusterTLSConfig)
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatalf("route TLS without a token: %v", err)
	}
	dir := filepath.Dir(path)
	if got := c.Cluster.TLS; got.CertFile != filepath.Join(dir, "n0.pem") || got.KeyFile != filepath.Join(dir, "n0-key.pem") || got.CAFile != ca.CertFile {
		t.Fatalf("cluster.tls %+v, want the files beside the config", got)
	}
	no, err := c.Cluster.nodeOptions(nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := no.RouteTLS
	if rt == nil || rt.GetCertificate == nil || rt.GetClientCertificate == nil || !rt.RootCAs.Equal(ca.Pool) || !rt.ClientCAs.Equal(ca.Pool) {
		t.Fatalf("route TLS %+v, want the node's certificate (reloaded when renewed) and the cluster's CA both ways", rt)
	}
	sc, err1 := rt.GetCertificate(&tls.ClientHelloInfo{})
	cc, err2 := rt.GetClientCertificate(&tls.CertificateRequestInfo{})
	if err1 != nil || err2 != nil || sc.Leaf.Subject.CommonName != "n0" || cc.Leaf.Subject.CommonName != "n0" {
		t.Fatalf("route certificates %v, %v (%v, %v), want n0's on both sides", sc, cc, err1, err2)
	}
	if no.RouteToken != "" {
		t.Fatalf("route token %q, want none", no.RouteToken)
	}

	c.Cluster.TLS = ClusterTLSConfig{}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "set cluster.tls") {
		t.Fatalf("routes on another host's reach with neither TLS nor a token: %v", err)
	}
}

// TestClusterTLSErrors: a cluster.tls section that cannot work is refused
// at load, naming the key.
func TestClusterTLSErrors(t *testing.T) {
	t.Parallel()
	ca := testcert.NewCA(t, "cluster CA")
	ca.Issue(t, "n0")
	ca.Issue(t, "n1")
	ca.Issue(t, "server-only", x509.ExtKeyUsageServerAuth)
	other := testcert.NewCA(t, "another CA")
	otherCert, otherKey := other.Issue(t, "stranger")
	const node = "cluster:\n  data_dir: data\n  name: c\n  listen: 10.0.0.5:6222\n  routes: [nats-route://10.0.0.5:6222]\n"
	for _, tc := range []struct {
		name, config, want string
	}{
		{name: "cert alone", config: node + "  tls: {cert_file: n0.pem}\n", want: "cluster.tls: cert_file, key_file and ca_file go together (missing key_file, ca_file)"},
		{name: "no ca", config: node + "  tls: {cert_file: n0.pem, key_file: n0-key.pem}\n", want: "(missing ca_file)"},
		{name: "unreadable cert", config: node + "  tls: {cert_file: gone.pem, key_file: n0-key.pem, ca_file: ca.pem}\n", want: "cluster.tls.cert_file: open "},
		{name: "unreadable key", config: node + "  tls: {cert_file: n0.pem, key_file: gone.pem, ca_file: ca.pem}\n", want: "cluster.tls.key_file: open "},
		{name: "unreadable ca", config: node + "  tls: {cert_file: n0.pem, key_file: n0-key.pem, ca_file: gone.pem}\n", want: "cluster.tls.ca_file: open "},
		{name: "key of another cert", config: node + "  tls: {cert_file: n0.pem, key_file: n1-key.pem, ca_file: ca.pem}\n", want: "cluster.tls.cert_file "},
		{name: "ca without a certificate", config: node + "  tls: {cert_file: n0.pem, key_file: n0-key.pem, ca_file: n0-key.pem}\n", want: "cluster.tls.ca_file: "},
		{name: "cert of another CA", config: node + "  tls: {cert_file: " + otherCert + ", key_file: " + otherKey + ", ca_file: ca.pem}\n", want: "not verified by ca_file"},
		{name: "cert for servers only", config: node + "  tls: {cert_file: server-only.pem, key_file: server-only-key.pem, ca_file: ca.pem}\n", want: "lack clientAuth"},
		{name: "not a cluster", config: "cluster:\n  data_dir: data\n  tls: {cert_file: n0.pem, key_file: n0-key.pem, ca_file: ca.pem}\n", want: "cluster.tls: route TLS is for a cluster node"},
		{name: "external NATS", config: "nats:\n  urls: [nats://127.0.0.1:4222]\ncluster:\n  tls: {cert_file: n0.pem, key_file: n0-key.pem, ca_file: ca.pem}\n", want: "TLS to nats.urls is nats.ca_file"},
		{name: "unknown key", config: node + "  tls: {cert_file: n0.pem, key_file: n0-key.pem, ca: ca.pem}\n", want: `"ca"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"ca.pem", "n0.pem", "n0-key.pem", "n1-key.pem", "server-only.pem", "server-only-key.pem"} {
				b, err := os.ReadFile(filepath.Join(filepath.Dir(ca.CertFile), f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "sluice.yaml")
			if err := os.WriteFile(path, []byte(tc.config), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadConfig(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestClusterTLSMixedRoutes: routes named partly by host name and partly
// by IP are valid but warned of under route TLS, where NATS would verify
// the nodes dialled by IP against the first name.
func TestClusterTLSMixedRoutes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		routes []string
		tls    bool
		want   string
	}{
		{name: "mixed", routes: []string{"nats-route://edge-1.internal:6222", "nats-route://10.0.0.6:6222"}, tls: true, want: "a node dialled by IP (10.0.0.6) is verified against the routes' first host name (edge-1.internal)"},
		{name: "names", routes: []string{"nats-route://edge-1.internal:6222", "nats-route://edge-2.internal:6222"}, tls: true},
		{name: "ips", routes: []string{"nats-route://10.0.0.5:6222", "nats-route://10.0.0.6:6222"}, tls: true},
		{name: "mixed without tls", routes: []string{"nats-route://edge-1.internal:6222", "nats-route://10.0.0.6:6222"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.Cluster.Routes = tc.routes
			if tc.tls {
				c.Cluster.TLS = ClusterTLSConfig{CertFile: "n.pem", KeyFile: "n-key.pem", CAFile: "ca.pem"}
			}
			got := strings.Join(c.Warnings(), "\n")
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("warnings %q, want %q", got, tc.want)
			}
		})
	}
}

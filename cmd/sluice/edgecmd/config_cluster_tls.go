package edgecmd

import (
	"cmp"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"

	edgetls "github.com/sluicehq/sluice/edge/tls"
)

// ClusterTLSConfig encrypts the routes between the edges of a cluster and
// verifies them both ways: each node presents CertFile when it dials a
// route and when it accepts one, and takes a peer only if the peer's
// certificate is signed by CAFile's CA. Default: none of it, routes in
// plain text. All three keys go together; the --cluster-tls-cert,
// --cluster-tls-key and --cluster-tls-ca flags override them. CertFile
// and KeyFile are read again when they change (looked at once a minute
// at most), for the routes made after; CAFile is read at the start.
type ClusterTLSConfig struct {
	// CertFile is this node's certificate chain (PEM, intermediates
	// after the node's own). It must name the host (DNS name or IP) the
	// other nodes' routes dial it at, and allow both server and client
	// authentication (extended key usages serverAuth and clientAuth).
	CertFile string `yaml:"cert_file,omitempty"`
	// KeyFile is CertFile's private key (PEM).
	KeyFile string `yaml:"key_file,omitempty"`
	// CAFile holds the cluster CA's certificate (PEM): the only roots a
	// peer's certificate may chain to. Use a CA of the cluster's own: any
	// certificate it issued for client authentication can join.
	CAFile string `yaml:"ca_file,omitempty"`
}

// set reports whether any key of the section is given.
func (t *ClusterTLSConfig) set() bool {
	return t.CertFile != "" || t.KeyFile != "" || t.CAFile != ""
}

// check validates the section of a cluster node: the three keys, and
// files that load and fit together. Errors name the key.
func (t *ClusterTLSConfig) check() error {
	_, err := t.config(nil)
	return err
}

// config returns the routes' TLS configuration for journal.NodeOptions,
// nil when the section is not set; log receives the certificate's
// reloads.
func (t *ClusterTLSConfig) config(log *slog.Logger) (*tls.Config, error) {
	if !t.set() {
		return nil, nil
	}
	var missing []string
	for _, k := range []struct{ name, v string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}, {"ca_file", t.CAFile}} {
		if k.v == "" {
			missing = append(missing, k.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("cluster.tls: cert_file, key_file and ca_file go together (missing %s)", strings.Join(missing, ", "))
	}
	for _, f := range []struct{ key, path string }{{"cert_file", t.CertFile}, {"key_file", t.KeyFile}} {
		if err := readable(f.path); err != nil {
			return nil, fmt.Errorf("cluster.tls.%s: %w", f.key, err)
		}
	}
	pool, err := readCertPool("cluster.tls.ca_file", t.CAFile)
	if err != nil {
		return nil, err
	}
	// The pair is loaded and checked as the other nodes will check it,
	// now and again whenever its files change, as the listener's
	// certificate is: a certificate renewed in place serves the routes
	// made after it, with no restart, once it passes (else it is logged,
	// and the previous pair serves on). The CA stays the one read here.
	files, err := edgetls.LoadCertFiles(t.CertFile, t.KeyFile,
		func(c *tls.Certificate) error { return verifyNodeCert(c, pool) }, log)
	if err != nil {
		return nil, fmt.Errorf("cluster.tls.cert_file %s: %w", t.CertFile, err)
	}
	return &tls.Config{GetCertificate: files.GetCertificate, GetClientCertificate: files.GetClientCertificate,
		RootCAs: pool, ClientCAs: pool}, nil
}

// verifyNodeCert checks, at the start and at each renewal, what the
// other nodes will check at every route (and would otherwise report only
// in their logs): the certificate chains to the cluster's CA, is valid
// now, and serves both ends of a route, the accepting one (serverAuth)
// and the dialling one (clientAuth). It is CertFiles' check, which hands
// it the pair with its leaf parsed.
func verifyNodeCert(cert *tls.Certificate, roots *x509.CertPool) error {
	leaf := cert.Leaf
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return err
		}
		inter.AddCert(c)
	}
	for _, u := range []struct {
		name string
		eku  x509.ExtKeyUsage
	}{{"serverAuth", x509.ExtKeyUsageServerAuth}, {"clientAuth", x509.ExtKeyUsageClientAuth}} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{u.eku}})
		var inv x509.CertificateInvalidError
		if errors.As(err, &inv) && inv.Reason == x509.IncompatibleUsage {
			return fmt.Errorf("its extended key usages lack %s: a node both accepts routes and dials them, so it needs serverAuth and clientAuth", u.name)
		}
		if err != nil {
			return fmt.Errorf("not verified by ca_file: %w", err)
		}
	}
	return nil
}

// mixedRoutesWarning warns of routes named partly by host name and
// partly by IP under route TLS, "" otherwise: NATS checks a node it dials
// by IP against the first host name among the routes when there is one
// (so that routes found by gossip, always by IP, can be verified), and
// that node's certificate would need the name.
func (c *ClusterConfig) mixedRoutesWarning() string {
	if !c.TLS.set() {
		return ""
	}
	var name, ip string
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		switch {
		case err != nil:
		case net.ParseIP(u.Hostname()) != nil:
			ip = cmp.Or(ip, u.Hostname())
		default:
			name = cmp.Or(name, u.Hostname())
		}
	}
	if name == "" || ip == "" {
		return ""
	}
	return fmt.Sprintf("cluster.routes: with cluster.tls, a node dialled by IP (%s) is verified against the routes' first host name (%s), which its certificate then needs: name every node by host name (each certificate with its node's IP SAN too, for the routes learned by gossip), or every one by IP", ip, name)
}

// readable reports why the file at path cannot be opened, nil if it can.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// Package testcert makes certificates for tests: a CA that issues node
// certificates as an operator's would, and self-signed server
// certificates. Files are PEM, keys ECDSA P-256, and everything lives in
// directories of the test's own.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a certificate authority of a test's own.
type CA struct {
	// CertFile is the CA certificate's PEM file (what a ca_file names);
	// Pool trusts it alone.
	CertFile string
	Pool     *x509.CertPool
	dir      string
	cert     *x509.Certificate
	key      *ecdsa.PrivateKey
}

// NewCA makes a self-signed CA called name.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	tmpl := template(t, name, nil)
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.KeyUsage = true, true, x509.KeyUsageCertSign
	der, key := create(t, tmpl, nil, nil)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &CA{dir: t.TempDir(), cert: cert, key: key, Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.CertFile = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.CertFile, "CERTIFICATE", der)
	return ca
}

// Issue writes a certificate for the node called name and its key, and
// returns their files (name.pem, name-key.pem in the CA's directory). It
// is what a cluster route needs: the IP SAN 127.0.0.1 (tests dial it) and
// localhost, for both server and client authentication (a node accepts
// routes and dials them), unless usage lists other extended key usages.
func (ca *CA) Issue(t testing.TB, name string, usage ...x509.ExtKeyUsage) (certFile, keyFile string) {
	t.Helper()
	if len(usage) == 0 {
		usage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	tmpl := template(t, name, usage)
	tmpl.IPAddresses, tmpl.DNSNames = []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"}
	der, key := create(t, tmpl, ca.cert, ca.key)
	certFile, keyFile = filepath.Join(ca.dir, name+".pem"), filepath.Join(ca.dir, name+"-key.pem")
	writePair(t, certFile, keyFile, der, key)
	return certFile, keyFile
}

// Config issues a certificate for name and returns a configuration that
// presents it and trusts this CA alone, as a cluster node's routes do.
func (ca *CA) Config(t testing.TB, name string) *tls.Config {
	t.Helper()
	certFile, keyFile := ca.Issue(t, name)
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: ca.Pool}
}

// SelfSigned writes a self-signed server certificate for the DNS name
// name alone (no IP address) and its key as dir/cert.pem and dir/key.pem,
// replacing what is there: a test of reloading writes a new serial over
// the old files and tells which certificate is served by it.
func SelfSigned(t testing.TB, dir, name string, serial int64) (certFile, keyFile string) {
	t.Helper()
	tmpl := template(t, name, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth})
	tmpl.SerialNumber, tmpl.DNSNames = big.NewInt(serial), []string{name}
	der, key := create(t, tmpl, nil, nil)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writePair(t, certFile, keyFile, der, key)
	return certFile, keyFile
}

// Pool returns a pool trusting the certificates of a PEM file.
func Pool(t testing.TB, certFile string) *x509.CertPool {
	t.Helper()
	b, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("testcert: no certificate in %s", certFile)
	}
	return pool
}

// template is a certificate for name valid from an hour ago for a day,
// with a random serial.
func template(t testing.TB, name string, usage []x509.ExtKeyUsage) *x509.Certificate {
	t.Helper()
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
	}
	if usage != nil {
		tmpl.KeyUsage, tmpl.ExtKeyUsage = x509.KeyUsageDigitalSignature, usage
	}
	return tmpl
}

// create signs tmpl with a new key, by parent (nil: self-signed).
func create(t testing.TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

func writePair(t testing.TB, certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) {
	t.Helper()
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

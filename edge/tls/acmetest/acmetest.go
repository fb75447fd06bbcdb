// Package acmetest runs a real ACME CA in the test process: Let's
// Encrypt's pebble, on loopback, with a DNS server that resolves every name
// to 127.0.0.1. Its validation authority connects to the ports the test
// names, so an edge under test proves control of a domain by answering
// http-01 or tls-alpn-01 challenges there.
//
// Pebble's validation authority keeps one goroutine for the life of the
// process (va.VAImpl.processTasks); test packages using this one ignore it
// in their goleak check with IgnoreLeaks.
package acmetest

import (
	"crypto/x509"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"go.uber.org/goleak"
)

// IgnoreLeaks are the goleak options for what pebble and certmagic leave
// running by design: pebble's validation task loop, and certmagic's
// per-CA rate limiters (package globals with no way to stop them).
func IgnoreLeaks() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("github.com/letsencrypt/pebble/v2/va.VAImpl.processTasks"),
		goleak.IgnoreAnyFunction("github.com/caddyserver/certmagic.(*RingBufferRateLimiter).loop"),
	}
}

// Options configure a CA.
type Options struct {
	// HTTPPort and TLSPort are where the validation authority connects to
	// validate http-01 and tls-alpn-01 challenges (on 127.0.0.1).
	// Required: the ports of the edge under test.
	HTTPPort, TLSPort int
	// Validity of the certificates issued; default pebble's 90 days.
	Validity time.Duration
}

// CA is a running pebble. Stop it with Close (registered with t.Cleanup by
// Start).
type CA struct {
	// URL is the ACME directory.
	URL string
	// TrustFile is a PEM file of the certificate of the directory's HTTPS
	// server, for the ACME client (the edge's --acme-ca-root).
	TrustFile string

	ca     *ca.CAImpl
	hs     *httptest.Server
	dns    *dnsServer
	orders atomic.Int64
}

// Start runs a CA until the test ends. It sets pebble's environment for
// fast tests (no random validation delays, no rejected nonces), so the
// calling test must not be parallel.
func Start(t testing.TB, opts Options) *CA {
	t.Helper()
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	t.Setenv("PEBBLE_AUTHZREUSE", "0")
	dns, err := startDNS()
	if err != nil {
		t.Fatalf("acmetest: dns server: %v", err)
	}
	logger := log.New(io.Discard, "", 0)
	store := db.NewMemoryStore()
	profile := ca.Profile{Description: "acmetest", ValidityPeriod: uint64(opts.Validity / time.Second)}
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{"default": profile})
	validator := va.New(logger, opts.HTTPPort, opts.TLSPort, false, dns.addr, store)
	front := wfe.New(logger, store, validator, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)
	c := &CA{ca: authority, dns: dns}
	c.hs = httptest.NewTLSServer(c.count(front.Handler()))
	c.URL = c.hs.URL + wfe.DirectoryPath
	c.TrustFile = filepath.Join(t.TempDir(), "acme-ca.pem")
	der := c.hs.Certificate().Raw
	if err := os.WriteFile(c.TrustFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// count wraps the ACME handler to count new orders.
func (c *CA) count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/order-plz" {
			c.orders.Add(1)
		}
		h.ServeHTTP(w, r)
	})
}

// Orders returns how many certificate orders clients have placed.
func (c *CA) Orders() int { return int(c.orders.Load()) }

// TrustPool returns a pool holding the directory server's certificate.
func (c *CA) TrustPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.hs.Certificate())
	return p
}

// Roots returns a pool holding the root the issued certificates chain to:
// what a client of the edge must trust.
func (c *CA) Roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.ca.GetRootCert(0).Cert)
	return p
}

// Close stops the CA's servers. It is idempotent.
func (c *CA) Close() {
	c.hs.Close()
	c.dns.close()
}

package tls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// staticCheckEvery bounds how often the certificate files are checked for
// a change.
const staticCheckEvery = time.Minute

// staticCert serves a certificate the operator provides, reloading its
// files when they change.
type staticCert struct {
	certFile, keyFile string
	now               func() time.Time
	// check, when set, vets every pair loaded (the first too); a renewal
	// it refuses is not served. log receives what a reload did.
	check func(*tls.Certificate) error
	log   *slog.Logger

	mu      sync.Mutex // guards the fields below; held by handshakes briefly
	cert    *tls.Certificate
	mtimes  [2]time.Time // of certFile and keyFile when cert was loaded
	checked time.Time
}

// newStaticCert loads the files once; an error here stops the edge from
// starting with a certificate it cannot serve.
func newStaticCert(certFile, keyFile string, check func(*tls.Certificate) error, log *slog.Logger) (*staticCert, error) {
	if log == nil {
		log = slog.Default()
	}
	s := &staticCert{certFile: certFile, keyFile: keyFile, now: time.Now, check: check, log: log}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load reads and parses the pair.
func (s *staticCert) load() error {
	mt, err := s.stat()
	if err != nil {
		return err
	}
	c, err := tls.LoadX509KeyPair(s.certFile, s.keyFile)
	if err != nil {
		return fmt.Errorf("tls: certificate %s, key %s: %w", s.certFile, s.keyFile, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return fmt.Errorf("tls: certificate %s: %w", s.certFile, err)
		}
	}
	if s.check != nil {
		if err := s.check(&c); err != nil {
			return fmt.Errorf("tls: certificate %s: %w", s.certFile, err)
		}
	}
	s.cert, s.mtimes = &c, mt
	return nil
}

func (s *staticCert) stat() ([2]time.Time, error) {
	var mt [2]time.Time
	for i, f := range []string{s.certFile, s.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return mt, fmt.Errorf("tls: %w", err)
		}
		mt[i] = fi.ModTime()
	}
	return mt, nil
}

// get returns the certificate, first reloading it if its files changed
// since the last check (at most once every staticCheckEvery). A reload
// that fails keeps the certificate already loaded: a half-written file
// during a renewal must not take the edge down.
func (s *staticCert) get() *tls.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if now.Sub(s.checked) < staticCheckEvery {
		return s.cert
	}
	s.checked = now
	if mt, err := s.stat(); err == nil && mt != s.mtimes {
		// On failure, cert and mtimes stay: tried again at the next
		// check, and said each time, since the pair served ages.
		if err := s.load(); err != nil {
			s.log.Error("tls: the changed certificate files are not served; the previous pair still is",
				"cert_file", s.certFile, "key_file", s.keyFile, "err", err, "serving_until", s.cert.Leaf.NotAfter)
		} else {
			s.log.Info("tls: certificate reloaded", "cert_file", s.certFile, "not_after", s.cert.Leaf.NotAfter)
		}
	}
	return s.cert
}

// getCertificate implements tls.Config.GetCertificate.
func (s *staticCert) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return s.get(), nil
}

// leaf returns the parsed certificate served now.
func (s *staticCert) leaf() *x509.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cert.Leaf
}

// CertFiles is a certificate and key from files the operator renews in
// place, for TLS other than the edge's listener (a cluster's routes):
// each handshake gets the pair last loaded, and the files are read again
// when they change, as the listener's own certificate is (looked at once
// a minute at most; a pair that fails to load keeps the previous one).
type CertFiles struct{ s *staticCert }

// LoadCertFiles loads the pair; an error is the edge's to stop on.
// check, when not nil, vets each pair loaded, the first and every
// renewal (one it refuses is logged and not served), with its Leaf
// parsed; log receives the reloads (default slog.Default()).
func LoadCertFiles(certFile, keyFile string, check func(*tls.Certificate) error, log *slog.Logger) (*CertFiles, error) {
	s, err := newStaticCert(certFile, keyFile, check, log)
	if err != nil {
		return nil, err
	}
	return &CertFiles{s: s}, nil
}

// GetCertificate implements tls.Config.GetCertificate: the certificate
// presented to a peer that dials in.
func (c *CertFiles) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return c.s.get(), nil
}

// GetClientCertificate implements tls.Config.GetClientCertificate: the
// certificate presented to a peer this side dials.
func (c *CertFiles) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return c.s.get(), nil
}

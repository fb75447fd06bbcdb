package tls

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Errors returned by New for options that cannot work.
var (
	// ErrNoCertificate: neither domains nor a certificate file were given.
	ErrNoCertificate = errors.New("tls: no domains and no certificate file")
	// ErrBothSources: domains (ACME) and a certificate file were both given.
	ErrBothSources = errors.New("tls: set domains (automatic certificates) or a certificate file, not both")
	// ErrNoChallenge: both ACME challenges were disabled.
	ErrNoChallenge = errors.New("tls: both http-01 and tls-alpn-01 challenges are disabled")
)

// LetsEncrypt is the ACME directory used when Options.CA is empty: Let's
// Encrypt's production CA.
const LetsEncrypt = "https://acme-v02.api.letsencrypt.org/directory"

// Options say where an edge's certificates come from. Either Domains
// (certificates obtained and renewed through ACME) or CertFile and KeyFile
// (a certificate the operator provides) must be set. A nil *Options is
// invalid; every zero field means its documented default.
type Options struct {
	// Domains are the names to obtain certificates for through ACME, such
	// as "edge.example.com". Each must resolve to this host, whose HTTP
	// port (http-01) or HTTPS port (tls-alpn-01) must be reachable from
	// the CA.
	Domains []string
	// Email is the ACME account's contact, where the CA sends expiry
	// warnings. Default none (an anonymous account).
	Email string
	// CA is the ACME directory URL. Default LetsEncrypt; use Let's
	// Encrypt's staging directory, or a private CA, for tests.
	CA string
	// CARoots are the roots trusted for the CA's own HTTPS endpoint (a
	// private CA's). Default nil: the system's roots.
	CARoots *x509.CertPool
	// CertFile and KeyFile are PEM files of a certificate chain and its
	// key, for operators who bring their own certificate. The files are
	// read again when they change (checked at most once a minute), so a
	// renewal by another tool needs no restart.
	CertFile, KeyFile string
	// CertDir is where ACME accounts, keys and certificates are stored, so
	// that a restart reuses them instead of asking the CA again. Default
	// DefaultCertDir().
	CertDir string
	// DisableHTTPChallenge and DisableTLSALPNChallenge turn off one of the
	// two ACME challenges; at least one must stay on. http-01 needs the
	// HTTP handler (Manager.HTTPHandler) reachable on port 80 from the
	// CA, tls-alpn-01 needs the HTTPS listener (Manager.TLSConfig)
	// reachable on port 443.
	DisableHTTPChallenge, DisableTLSALPNChallenge bool
	// ListenHost, HTTPPort and TLSPort are where the edge's HTTP and HTTPS
	// listeners are; the ACME library checks them before it would open a
	// challenge listener of its own (it does not while they answer).
	// Defaults: all interfaces, 80 and 443.
	ListenHost        string
	HTTPPort, TLSPort int
	// RenewInterval is how often certificates are checked for renewal.
	// Default 10 minutes.
	RenewInterval time.Duration
	// RenewalWindow is the fraction of a certificate's lifetime, at its
	// end, in which it is renewed (unless the CA suggests another window).
	// Default 1/3: a 90-day certificate is renewed 30 days before expiry.
	RenewalWindow float64
	// Logger receives the certificate manager's logs; default
	// slog.Default().
	Logger *slog.Logger
}

// DefaultCertDir is where certificates are stored by default: "sluice/certs"
// under the user's data directory ($XDG_DATA_HOME, or ~/.local/share).
func DefaultCertDir() string {
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil || home == "" {
			home = "."
		}
		base = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(base, "sluice", "certs")
}

// Check returns the error of options that cannot work; New calls it.
func (o *Options) Check() error {
	switch {
	case o == nil:
		return ErrNoCertificate
	case len(o.Domains) > 0 && (o.CertFile != "" || o.KeyFile != ""):
		return ErrBothSources
	case len(o.Domains) == 0 && o.CertFile == "" && o.KeyFile == "":
		return ErrNoCertificate
	case len(o.Domains) == 0 && (o.CertFile == "" || o.KeyFile == ""):
		return errors.New("tls: a certificate file needs its key file, and the other way round")
	case len(o.Domains) > 0 && o.DisableHTTPChallenge && o.DisableTLSALPNChallenge:
		return ErrNoChallenge
	case o.RenewalWindow < 0 || o.RenewalWindow >= 1:
		return fmt.Errorf("tls: renewal window %v: want a fraction of a certificate's lifetime, below 1", o.RenewalWindow)
	}
	for _, d := range o.Domains {
		if err := CheckDomain(d); err != nil {
			return err
		}
	}
	return nil
}

// CheckDomain reports whether name can get a certificate through ACME's
// http-01 and tls-alpn-01 challenges: a DNS name (not an IP address, not a
// wildcard) of letters, digits, hyphens and dots, with at least two labels.
func CheckDomain(name string) error {
	bad := func(why string) error { return fmt.Errorf("tls: domain %q: %s", name, why) }
	switch {
	case name == "":
		return bad("empty")
	case len(name) > 253:
		return bad("longer than 253 bytes")
	case strings.HasPrefix(name, "*."):
		return bad("wildcards need the dns-01 challenge, which the edge does not solve")
	case !strings.Contains(strings.Trim(name, "."), "."):
		return bad("not a fully qualified name")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return bad("bad label " + fmt.Sprintf("%q", label))
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return bad(fmt.Sprintf("character %q", c))
			}
		}
	}
	allDigits := strings.Trim(name, "0123456789.") == ""
	if allDigits {
		return bad("an IP address; certificates through ACME here are for names")
	}
	return nil
}

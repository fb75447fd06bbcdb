package edgecmd

import (
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	edgetls "github.com/sluicehq/sluice/edge/tls"
)

// Default addresses of the listeners.
const (
	defaultListen      = "127.0.0.1:8080" // plain HTTP, local development
	defaultTLSListen   = ":443"           // HTTPS, with tls configured
	defaultHTTPListen  = ":80"            // ACME http-01 and redirects, with tls
	challengeHTTP01    = "http-01"
	challengeTLSALPN01 = "tls-alpn-01"
	listenOff          = "off"
)

// TLSConfig turns on HTTPS and WSS: with Domains, certificates are obtained
// and renewed through ACME (Let's Encrypt by default); with CertFile and
// KeyFile, the operator provides one. With either set, listen defaults to
// ":443" and an HTTP listener on HTTPListen answers ACME http-01
// challenges and redirects every other request to HTTPS. Unset (the
// default), the edge serves plain HTTP and WS.
type TLSConfig struct {
	// Domains are the public names of this edge, each resolving to it and
	// reachable from the internet on ports 80 or 443 (for the CA's
	// validation). Default none. The --domain flag (repeatable) overrides.
	Domains []string `yaml:"domains,omitempty"`
	// Email is the ACME account's contact, where the CA sends expiry
	// warnings. Default none; recommended. --email overrides.
	Email string `yaml:"email,omitempty"`
	// ACMECA is the ACME directory URL. Default Let's Encrypt production
	// (https://acme-v02.api.letsencrypt.org/directory); use
	// https://acme-staging-v02.api.letsencrypt.org/directory to try a
	// setup, or a private CA. --acme-ca overrides.
	ACMECA string `yaml:"acme_ca,omitempty"`
	// ACMECARoot is a PEM file of the root certificates trusted for the
	// ACME CA's own HTTPS endpoint (a private CA). Default: the system's
	// roots. --acme-ca-root overrides.
	ACMECARoot string `yaml:"acme_ca_root,omitempty"`
	// CertFile and KeyFile are PEM files of a certificate chain and its
	// key, for operators who bring their own certificate (exclusive with
	// Domains). They are read again when they change. --tls-cert and
	// --tls-key override.
	CertFile string `yaml:"cert_file,omitempty"`
	KeyFile  string `yaml:"key_file,omitempty"`
	// CertDir is where ACME accounts, keys and certificates are stored, so
	// that a restart reuses them. Default $XDG_DATA_HOME/sluice/certs, or
	// ~/.local/share/sluice/certs. --cert-dir overrides.
	CertDir string `yaml:"cert_dir,omitempty"`
	// HTTPListen is the address of the HTTP listener (http-01 challenges,
	// redirects to HTTPS), host:port, or "off" for none (then only
	// tls-alpn-01 can validate). Default ":80". --http-listen overrides.
	HTTPListen string `yaml:"http_listen,omitempty"`
	// Challenges are the ACME challenges the edge answers: "http-01"
	// (needs HTTPListen reachable on port 80) and "tls-alpn-01" (needs
	// listen reachable on port 443). Default both.
	Challenges []string `yaml:"challenges,omitempty"`
	// RedirectPort is the HTTPS port written in redirects, when clients
	// reach the edge on another port than the one it listens on (behind a
	// port forward). Default: listen's port (left out when 443).
	RedirectPort int `yaml:"redirect_port,omitempty"`
}

// AdminConfig is the operators' listener.
type AdminConfig struct {
	// Listen is the address of the admin listener, host:port, serving
	// /metrics, /healthz, /readyz, Go's profiler under /debug/pprof/, the
	// server API and the admin page at /admin/.
	// Default none: /metrics, /healthz and /readyz are served on the main
	// listener. When set, /metrics moves here: keep it private (such as
	// 127.0.0.1:9090). An edge serving TLS on a public address without it
	// warns at start. --admin-listen overrides.
	Listen string `yaml:"listen,omitempty"`
}

// enabled reports whether the edge serves TLS.
func (t *TLSConfig) enabled() bool {
	return len(t.Domains) > 0 || t.CertFile != "" || t.KeyFile != ""
}

// httpListen returns the HTTP listener's address, "" for none.
func (t *TLSConfig) httpListen() string {
	switch t.HTTPListen {
	case "":
		return defaultHTTPListen
	case listenOff:
		return ""
	}
	return t.HTTPListen
}

// ListenAddr returns the main listener's address: listen, or its default
// (":443" with TLS, else "127.0.0.1:8080").
func (c *Config) ListenAddr() string {
	switch {
	case c.Listen != "":
		return c.Listen
	case c.TLS.enabled():
		return defaultTLSListen
	}
	return defaultListen
}

// check validates the tls section; errors name the key.
func (t *TLSConfig) check() error {
	if !t.enabled() {
		// The other keys may be in the file while the --domain flag
		// turns TLS on; they are checked then.
		return nil
	}
	for i, d := range t.Domains {
		if err := edgetls.CheckDomain(d); err != nil {
			return fmt.Errorf("tls.domains[%d]: %w", i, err)
		}
	}
	for i, ch := range t.Challenges {
		if ch != challengeHTTP01 && ch != challengeTLSALPN01 {
			return fmt.Errorf("tls.challenges[%d]: %q is not http-01 or tls-alpn-01", i, ch)
		}
	}
	if err := t.options(0, 0, "").Check(); err != nil {
		return err // already "tls: ..."
	}
	if t.wants(challengeHTTP01) && t.httpListen() == "" && len(t.Domains) > 0 {
		return errors.New("tls.http_listen: http-01 needs the HTTP listener; list only tls-alpn-01 in tls.challenges to turn it off")
	}
	if a := t.httpListen(); a != "" {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("tls.http_listen: %q is not host:port or off", a)
		}
	}
	if t.RedirectPort < 0 || t.RedirectPort > 65535 {
		return fmt.Errorf("tls.redirect_port: %d is not a port", t.RedirectPort)
	}
	return nil
}

// wants reports whether the challenge is enabled.
func (t *TLSConfig) wants(challenge string) bool {
	return len(t.Challenges) == 0 || slices.Contains(t.Challenges, challenge)
}

// check validates the admin section.
func (a *AdminConfig) check() error {
	if a.Listen == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(a.Listen); err != nil {
		return fmt.Errorf("admin.listen: %q is not host:port", a.Listen)
	}
	return nil
}

// options returns the certificate manager's options for listeners on the
// given ports and host; relative paths resolve against dir.
func (t *TLSConfig) options(httpsPort, httpPort int, host string) *edgetls.Options {
	return &edgetls.Options{
		Domains:                 slices.Clone(t.Domains),
		Email:                   t.Email,
		CA:                      t.ACMECA,
		CertFile:                t.CertFile,
		KeyFile:                 t.KeyFile,
		CertDir:                 t.CertDir,
		DisableHTTPChallenge:    !t.wants(challengeHTTP01),
		DisableTLSALPNChallenge: !t.wants(challengeTLSALPN01),
		ListenHost:              host,
		HTTPPort:                httpPort,
		TLSPort:                 httpsPort,
	}
}

// caRoots reads ACMECARoot, nil when unset.
func (t *TLSConfig) caRoots() (*x509.CertPool, error) {
	if t.ACMECARoot == "" {
		return nil, nil
	}
	return readCertPool("tls.acme_ca_root", t.ACMECARoot)
}

// readCertPool reads the PEM certificates of the file at path, the
// config's key (named in errors).
func readCertPool(key, path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s: %s holds no PEM certificate", key, path)
	}
	return pool, nil
}

// resolve makes the section's relative paths relative to dir (the config
// file's directory).
func (t *TLSConfig) resolve(dir string) {
	resolvePaths(dir, &t.ACMECARoot, &t.CertFile, &t.KeyFile, &t.CertDir)
}

// resolvePaths makes the relative paths among paths relative to dir (the
// config file's directory; "" leaves them be).
func resolvePaths(dir string, paths ...*string) {
	for _, p := range paths {
		if *p != "" && !filepath.IsAbs(*p) && dir != "" {
			*p = filepath.Join(dir, *p)
		}
	}
}

// portOf returns the port of a listener address.
func portOf(addr net.Addr) int {
	if a, ok := addr.(*net.TCPAddr); ok {
		return a.Port
	}
	_, p, _ := net.SplitHostPort(addr.String())
	n, _ := strconv.Atoi(p)
	return n
}

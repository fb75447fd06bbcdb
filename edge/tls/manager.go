// Package tls gives an edge its TLS certificates: obtained and renewed
// through ACME (Let's Encrypt, or any ACME CA) with certmagic, or provided
// by the operator as PEM files.
//
// With ACME, the edge answers both challenges itself: http-01 through
// Manager.HTTPHandler on its HTTP listener (port 80), which redirects
// every other request to HTTPS (RedirectHandler), and tls-alpn-01 through
// Manager.TLSConfig on its HTTPS listener (port 443). Accounts, keys and
// certificates are kept in a directory (Options.CertDir) so that a restart
// serves the stored certificate without asking the CA again; a background
// goroutine renews certificates before they expire.
//
// The package is named after what it provides; importers that also need
// crypto/tls name one of the two (edgetls).
package tls

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/certmagic"
)

// retryDelays space the attempts to obtain the first certificates; the
// last one repeats. Let's Encrypt allows 5 failed validations per hour per
// name, so retries stay sparse.
var retryDelays = []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour}

// Manager provides the edge's certificates. Create it with New, serve
// TLSConfig on the HTTPS listener and HTTPHandler on the HTTP one, call
// Start once they listen, and Close at shutdown.
type Manager struct {
	opts   Options
	log    *slog.Logger
	static *staticCert // the operator's certificate; nil with ACME

	// With ACME:
	magic   *certmagic.Config
	cache   *certmagic.Cache
	issuer  *certmagic.ACMEIssuer
	storage *gatedStorage

	obtained atomic.Uint64 // certificates obtained or renewed; written by certmagic's events
	failed   atomic.Uint64 // failed attempts to obtain or renew

	ready     chan struct{} // closed once every domain has a certificate
	readyOnce sync.Once
	startOnce sync.Once
	closeOnce sync.Once
	cancel    context.CancelFunc // ends the obtain loop; set by Start
	done      chan struct{}      // closed when the obtain loop returns
}

// New checks the options and prepares the certificates: it loads the
// operator's certificate files, or sets up certificate management for the
// domains (nothing is asked of the CA before Start).
func New(opts *Options) (*Manager, error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	m := &Manager{opts: *opts, log: opts.Logger, ready: make(chan struct{}), done: make(chan struct{})}
	if m.log == nil {
		m.log = slog.Default()
	}
	if opts.CertFile != "" {
		s, err := newStaticCert(opts.CertFile, opts.KeyFile, nil, m.log)
		if err != nil {
			return nil, err
		}
		m.static = s
		m.markReady()
		return m, nil
	}
	if err := m.setupACME(); err != nil {
		return nil, err
	}
	return m, nil
}

// setupACME builds certmagic's cache, config and ACME issuer.
func (m *Manager) setupACME() error {
	o := &m.opts
	dir := o.CertDir
	if dir == "" {
		dir = DefaultCertDir()
	}
	storage, err := newStorage(dir)
	if err != nil {
		return err
	}
	m.storage = storage
	zl := zapLogger(m.log.With("component", "acme"))
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert:   func(certmagic.Certificate) (*certmagic.Config, error) { return m.magic, nil },
		RenewCheckInterval: o.RenewInterval,
		Logger:             zl,
	})
	m.magic = certmagic.New(m.cache, certmagic.Config{
		RenewalWindowRatio: o.RenewalWindow,
		Storage:            storage,
		DefaultServerName:  strings.ToLower(o.Domains[0]), // for clients that send no SNI
		OnEvent:            m.onEvent,
		Logger:             zl,
	})
	ca := o.CA
	if ca == "" {
		ca = LetsEncrypt
	}
	m.issuer = certmagic.NewACMEIssuer(m.magic, certmagic.ACMEIssuer{
		CA:                      ca,
		Email:                   o.Email,
		Agreed:                  true,
		DisableHTTPChallenge:    o.DisableHTTPChallenge,
		DisableTLSALPNChallenge: o.DisableTLSALPNChallenge,
		ListenHost:              o.ListenHost,
		AltHTTPPort:             o.HTTPPort,
		AltTLSALPNPort:          o.TLSPort,
		TrustedRoots:            o.CARoots,
		Logger:                  zl,
	})
	m.magic.Issuers = []certmagic.Issuer{m.issuer}
	return nil
}

// onEvent counts certmagic's certificate events for Stats.
func (m *Manager) onEvent(_ context.Context, event string, _ map[string]any) error {
	switch event {
	case "cert_obtained":
		m.obtained.Add(1)
	case "cert_failed":
		m.failed.Add(1)
	}
	return nil
}

// TLSConfig returns the configuration of the HTTPS listener: it serves the
// certificates and answers tls-alpn-01 challenges. It offers HTTP/1.1
// only, which WebSocket upgrades need.
func (m *Manager) TLSConfig() *tls.Config {
	if m.static != nil {
		return &tls.Config{
			GetCertificate: m.static.getCertificate,
			NextProtos:     []string{"http/1.1"},
			MinVersion:     tls.VersionTLS12,
		}
	}
	return &tls.Config{
		GetCertificate: m.magic.GetCertificate,
		NextProtos:     []string{"http/1.1", "acme-tls/1"},
		MinVersion:     tls.VersionTLS12,
	}
}

// HTTPHandler returns the handler of the HTTP listener: it answers
// http-01 challenges and passes every other request to next (usually
// RedirectHandler).
func (m *Manager) HTTPHandler(next http.Handler) http.Handler {
	if m.issuer == nil {
		return next
	}
	return m.issuer.HTTPChallengeHandler(next)
}

// Start begins obtaining the certificates the manager does not have yet
// (from storage, else from the CA) and keeps them renewed, in the
// background, until Close. Call it once the HTTP and HTTPS listeners
// accept, since the CA validates through them. Ready reports when every
// domain has a certificate. Errors are logged and retried.
func (m *Manager) Start() {
	m.startOnce.Do(func() {
		if m.magic == nil {
			close(m.done)
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		m.cancel = cancel
		go m.obtainLoop(ctx)
	})
}

// obtainLoop manages the domains until it succeeds or ctx ends; from then
// on certmagic's maintenance goroutine renews.
func (m *Manager) obtainLoop(ctx context.Context) {
	defer close(m.done)
	for attempt := 0; ; attempt++ {
		err := m.magic.ManageSync(ctx, m.opts.Domains)
		if err == nil {
			m.markReady()
			m.log.Info("certificates ready", "domains", m.opts.Domains)
			return
		}
		if ctx.Err() != nil {
			return
		}
		wait := retryDelays[min(attempt, len(retryDelays)-1)]
		m.log.Error("obtaining certificates failed; will retry", "domains", m.opts.Domains,
			"err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

func (m *Manager) markReady() { m.readyOnce.Do(func() { close(m.ready) }) }

// Ready returns a channel closed once every domain has a certificate (at
// once for the operator's certificate).
func (m *Manager) Ready() <-chan struct{} { return m.ready }

// Certificate describes one certificate served.
type Certificate struct {
	Name     string    // the domain (ACME) or the certificate's first name
	NotAfter time.Time // when it expires
}

// Certificates returns the certificates served now, one per domain that
// has one, for monitoring their expiry.
func (m *Manager) Certificates() []Certificate {
	if m.static != nil {
		leaf := m.static.leaf()
		name := leaf.Subject.CommonName
		if len(leaf.DNSNames) > 0 {
			name = leaf.DNSNames[0]
		}
		return []Certificate{{Name: name, NotAfter: leaf.NotAfter}}
	}
	var out []Certificate
	for _, d := range m.opts.Domains {
		var best time.Time
		for _, c := range m.cache.AllMatchingCertificates(strings.ToLower(d)) {
			if c.Leaf != nil && c.Leaf.NotAfter.After(best) {
				best = c.Leaf.NotAfter
			}
		}
		if !best.IsZero() {
			out = append(out, Certificate{Name: d, NotAfter: best})
		}
	}
	slices.SortFunc(out, func(a, b Certificate) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Stats counts certificate events since New.
type Stats struct {
	Obtained uint64 // certificates obtained or renewed from the CA
	Failed   uint64 // failed attempts to obtain or renew one
}

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	return Stats{Obtained: m.obtained.Load(), Failed: m.failed.Load()}
}

// Close stops obtaining and renewing certificates and waits for the
// manager's goroutines; a renewal certmagic still runs after it writes
// nothing. It is idempotent.
func (m *Manager) Close() error {
	m.closeOnce.Do(func() {
		m.startOnce.Do(func() { close(m.done) }) // never started
		if m.cancel != nil {
			m.cancel()
		}
		<-m.done
		if m.cache != nil {
			m.cache.Stop()
			m.storage.close()
		}
	})
	return nil
}

// String names the certificate source, for logs and banners.
func (m *Manager) String() string {
	if m.static != nil {
		return "certificate " + m.opts.CertFile
	}
	return fmt.Sprintf("ACME (%s) for %s", m.issuer.CA, strings.Join(m.opts.Domains, ", "))
}

package tls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/tls/acmetest"
	"github.com/sluicehq/sluice/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, acmetest.IgnoreLeaks()...) }

// site is a Manager serving a tiny HTTPS site on loopback, with its HTTP
// listener answering challenges and redirecting.
type site struct {
	m         *Manager
	httpsAddr string
	httpAddr  string
}

// listenPair opens the HTTPS and HTTP listeners of a site on loopback.
func listenPair(t *testing.T) (https, http net.Listener) {
	t.Helper()
	var lns [2]net.Listener
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[i] = ln
	}
	return lns[0], lns[1]
}

func port(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// startCA runs pebble validating against the listeners' ports.
func startCA(t *testing.T, https, http net.Listener) *acmetest.CA {
	t.Helper()
	return acmetest.Start(t, acmetest.Options{HTTPPort: port(http), TLSPort: port(https)})
}

// acmeOptions are Options obtaining domain from ca into dir.
func acmeOptions(ca *acmetest.CA, dir string, https, http net.Listener, domain string) *Options {
	return &Options{
		Domains:  []string{domain},
		Email:    "ops@example.com",
		CA:       ca.URL,
		CARoots:  ca.TrustPool(),
		CertDir:  dir,
		HTTPPort: port(http), TLSPort: port(https), ListenHost: "127.0.0.1",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
}

// serve runs a site for opts on the listeners until the test ends.
func serve(t *testing.T, opts *Options, https, plain net.Listener) *site {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello over tls") })
	hs := &http.Server{Handler: hello, TLSConfig: m.TLSConfig(), ErrorLog: quietLog()}
	hp := &http.Server{Handler: m.HTTPHandler(RedirectHandler(port(https))), ErrorLog: quietLog()}
	errc := make(chan error, 2)
	go func() { errc <- hs.ServeTLS(https, "", "") }()
	go func() { errc <- hp.Serve(plain) }()
	t.Cleanup(func() {
		hs.Close()
		hp.Close()
		for range 2 {
			if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("serve: %v", err)
			}
		}
		m.Close()
	})
	m.Start()
	poll.Recv(t, "the first certificate", m.Ready())
	return &site{m: m, httpsAddr: https.Addr().String(), httpAddr: plain.Addr().String()}
}

// quietLog drops the HTTP servers' own logs (TLS handshake errors the
// tests cause on purpose).
func quietLog() *log.Logger { return log.New(io.Discard, "", 0) }

// get fetches https://domain/ from the site trusting roots only.
func (s *site) get(t *testing.T, domain string, roots *x509.CertPool) (string, *x509.Certificate, error) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: domain},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, s.httpsAddr)
		},
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Get("https://" + domain + "/")
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), resp.TLS.PeerCertificates[0], err
}

func TestObtainEachChallenge(t *testing.T) {
	for _, tc := range []struct {
		name        string
		disableHTTP bool
		disableALPN bool
	}{
		{name: "http-01", disableALPN: true},
		{name: "tls-alpn-01", disableHTTP: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			https, plain := listenPair(t)
			ca := startCA(t, https, plain)
			domain := "edge." + tc.name + ".test"
			opts := acmeOptions(ca, t.TempDir(), https, plain, domain)
			opts.DisableHTTPChallenge, opts.DisableTLSALPNChallenge = tc.disableHTTP, tc.disableALPN
			s := serve(t, opts, https, plain)

			body, leaf, err := s.get(t, domain, ca.Roots())
			if err != nil {
				t.Fatalf("GET over TLS trusting the CA's root: %v", err)
			}
			if body != "hello over tls" || leaf.DNSNames[0] != domain {
				t.Fatalf("got %q from a certificate for %v", body, leaf.DNSNames)
			}
			if ca.Orders() != 1 || s.m.Stats().Obtained != 1 {
				t.Fatalf("orders %d, obtained %d; want 1 each", ca.Orders(), s.m.Stats().Obtained)
			}
			certs := s.m.Certificates()
			if len(certs) != 1 || certs[0].Name != domain || !certs[0].NotAfter.Equal(leaf.NotAfter) {
				t.Fatalf("Certificates() = %v, want %s until %v", certs, domain, leaf.NotAfter)
			}
		})
	}
}

func TestUntrustedClientRefused(t *testing.T) {
	https, plain := listenPair(t)
	ca := startCA(t, https, plain)
	s := serve(t, acmeOptions(ca, t.TempDir(), https, plain, "edge.untrusted.test"), https, plain)

	_, _, err := s.get(t, "edge.untrusted.test", x509.NewCertPool())
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Fatalf("client trusting no root: err = %v, want an unknown authority error", err)
	}
}

func TestRestartReusesStoredCertificate(t *testing.T) {
	dir := t.TempDir()
	https, plain := listenPair(t)
	ca := startCA(t, https, plain)
	const domain = "edge.restart.test"
	first := serve(t, acmeOptions(ca, dir, https, plain, domain), https, plain)
	_, leaf1, err := first.get(t, domain, ca.Roots())
	if err != nil {
		t.Fatal(err)
	}
	first.m.Close()

	// A second manager on the same directory, as after a restart.
	https2, plain2 := listenPair(t)
	second := serve(t, acmeOptions(ca, dir, https2, plain2, domain), https2, plain2)
	_, leaf2, err := second.get(t, domain, ca.Roots())
	if err != nil {
		t.Fatal(err)
	}
	if !leaf2.Equal(leaf1) {
		t.Fatalf("after restart, serial %v; want the stored certificate's %v", leaf2.SerialNumber, leaf1.SerialNumber)
	}
	if ca.Orders() != 1 || second.m.Stats().Obtained != 0 {
		t.Fatalf("orders %d, obtained by the restarted manager %d; want 1 and 0", ca.Orders(), second.m.Stats().Obtained)
	}
}

// renewRuns numbers TestRenewsBeforeExpiry's runs.
var renewRuns atomic.Int32

func TestRenewsBeforeExpiry(t *testing.T) {
	https, plain := listenPair(t)
	ca := acmetest.Start(t, acmetest.Options{HTTPPort: port(plain), TLSPort: port(https), Validity: time.Hour})
	// certmagic keeps the backoff after a failed renewal per name in the
	// whole process: each run renews a name of its own, so that a renewal
	// cut short by an earlier run's Close does not hold this one back.
	domain := fmt.Sprintf("edge%d.renew.test", renewRuns.Add(1))
	opts := acmeOptions(ca, t.TempDir(), https, plain, domain)
	// An hour-long certificate renewed in the last 99.99% of its life is
	// due a third of a second after issuance; the maintenance pass renews it.
	opts.RenewalWindow = 0.9999
	opts.RenewInterval = 50 * time.Millisecond
	s := serve(t, opts, https, plain)
	_, first, err := s.get(t, domain, ca.Roots())
	if err != nil {
		t.Fatal(err)
	}
	poll.UntilNil(t, "the certificate's renewal", func() error {
		_, leaf, err := s.get(t, domain, ca.Roots())
		switch {
		case err != nil:
			return fmt.Errorf("orders %d, get: %w", ca.Orders(), err)
		case leaf.Equal(first):
			return fmt.Errorf("orders %d, still the first certificate", ca.Orders())
		}
		return nil
	})
	if ca.Orders() < 2 {
		t.Fatalf("orders = %d; a renewal is a new order", ca.Orders())
	}
}

func TestHTTPRedirectsToHTTPS(t *testing.T) {
	https, plain := listenPair(t)
	ca := startCA(t, https, plain)
	s := serve(t, acmeOptions(ca, t.TempDir(), https, plain, "edge.redirect.test"), https, plain)

	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.httpAddr+"/v2?appkey=demo", nil)
	req.Host = "edge.redirect.test"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "https://edge.redirect.test:" + strconv.Itoa(port(https)) + "/v2?appkey=demo"
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("HTTP answered %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

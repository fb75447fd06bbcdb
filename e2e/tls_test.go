package e2e

// Automatic TLS: `sluice edge --domain ...` obtains its certificate from a
// real ACME CA (pebble, in this process, on loopback) and serves WSS with
// it. The CA's validation authority resolves every name to 127.0.0.1 and
// connects to the edge's ports to check its challenges. The edge runs in
// this process too (package edgecmd), but for the restart, a process
// stopped by SIGTERM.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/tls/acmetest"
	"github.com/sluicehq/sluice/internal/poll"
)

// freePort returns a loopback port free a moment ago, for an edge that
// must listen where the CA was told to validate.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// tlsSetup is a CA and the ports and storage of the edges obtaining
// certificates from it.
type tlsSetup struct {
	ca                  *acmetest.CA
	domain              string
	httpsPort, httpPort int
	certDir             string
}

// newTLSSetup starts a CA that validates domain on two fresh ports.
func newTLSSetup(t *testing.T, domain string) *tlsSetup {
	t.Helper()
	s := &tlsSetup{domain: domain, httpsPort: freePort(t), httpPort: freePort(t), certDir: t.TempDir()}
	s.ca = acmetest.Start(t, acmetest.Options{HTTPPort: s.httpPort, TLSPort: s.httpsPort})
	return s
}

// startEdge runs `sluice edge` in this process with automatic TLS from
// the CA, its tls section as tls leaves it, and waits until it serves its
// certificate.
func (s *tlsSetup) startEdge(t *testing.T, tls func(*edgecmd.TLSConfig)) *edgecmdtest.Edge {
	t.Helper()
	cfg := edgecmd.DefaultConfig()
	cfg.Listen = "127.0.0.1:" + strconv.Itoa(s.httpsPort)
	cfg.TLS = edgecmd.TLSConfig{
		HTTPListen: "127.0.0.1:" + strconv.Itoa(s.httpPort),
		Domains:    []string{s.domain}, Email: "ops@example.com",
		ACMECA: s.ca.URL, ACMECARoot: s.ca.TrustFile,
		CertDir: s.certDir,
	}
	if tls != nil {
		tls(&cfg.TLS)
	}
	e := edgecmdtest.StartConfig(t, cfg, nil)
	s.awaitCertificate(t, e.Done(), e.Stderr.String)
	return e
}

// startEdgeProcess runs `sluice edge` with automatic TLS from the CA as a
// process, and waits until it serves its certificate.
func (s *tlsSetup) startEdgeProcess(t *testing.T) *process {
	t.Helper()
	p := startProcess(t, nil, "edge",
		"--listen", "127.0.0.1:"+strconv.Itoa(s.httpsPort),
		"--http-listen", "127.0.0.1:"+strconv.Itoa(s.httpPort),
		"--domain", s.domain, "--email", "ops@example.com",
		"--acme-ca", s.ca.URL, "--acme-ca-root", s.ca.TrustFile,
		"--cert-dir", s.certDir,
	)
	s.awaitCertificate(t, p.done, p.stderr.String)
	return p
}

// awaitCertificate waits until the edge serves its certificate; done is
// closed if it stops first, and logs says why.
func (s *tlsSetup) awaitCertificate(t *testing.T, done <-chan struct{}, logs func() string) {
	t.Helper()
	poll.Until(t, "the edge to serve its certificate", func() bool {
		select {
		case <-done:
			t.Fatalf("the edge stopped:\n%s", logs())
		default:
		}
		resp, err := s.client(s.ca.Roots()).Get("https://" + s.domain + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// client returns an HTTP client trusting roots only, reaching the domain
// (any port) at the edge's HTTPS port on loopback, and not following
// redirects.
func (s *tlsSetup) client(roots *x509.CertPool) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots},
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if host, _, _ := net.SplitHostPort(addr); host == s.domain {
					addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.httpsPort))
				}
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			DisableKeepAlives: true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       5 * time.Second,
	}
}

// serial returns the serial number of the certificate the edge serves.
func (s *tlsSetup) serial(t *testing.T) string {
	t.Helper()
	resp, err := s.client(s.ca.Roots()).Get("https://" + s.domain + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.TLS.PeerCertificates[0].SerialNumber.String()
}

// wss dials the edge's RTM endpoint over TLS trusting roots only.
func (s *tlsSetup) wss(t *testing.T, roots *x509.CertPool) (*websocket.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	url := fmt.Sprintf("wss://%s:%d/v2?appkey=demo", s.domain, s.httpsPort)
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: s.client(roots)})
	if err == nil {
		t.Cleanup(func() { ws.CloseNow() })
	}
	return ws, err
}

// rtmCall sends a JSON request and returns the next PDU.
func rtmCall(t *testing.T, ws *websocket.Conn, action string, body any) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"action": action, "id": 1, "body": body})
	if err := ws.Write(ctx, websocket.MessageText, req); err != nil {
		t.Fatal(err)
	}
	return rtmNext(t, ws)
}

// rtmNext reads one PDU.
func rtmNext(t *testing.T, ws *websocket.Conn) map[string]any {
	t.Helper()
	return servertest.Recv[map[string]any](t, ws, 5*time.Second)
}

// TestTLSEdgeAutomaticCertificate: a WSS client trusting only the CA's
// root subscribes and receives a message; plain HTTP is redirected to
// HTTPS; a client that does not trust the root is refused; the metrics
// show the certificate.
func TestTLSEdgeAutomaticCertificate(t *testing.T) {
	s := newTLSSetup(t, "edge.sluice.test")
	edge := s.startEdge(t, nil)
	if want := fmt.Sprintf("url:    wss://edge.sluice.test:%d", s.httpsPort); !strings.Contains(edge.Stdout.String(), want) {
		t.Errorf("banner lacks %q:\n%s", want, edge.Stdout.String())
	}

	sub, err := s.wss(t, s.ca.Roots())
	if err != nil {
		t.Fatalf("wss trusting the CA's root: %v", err)
	}
	if a := rtmCall(t, sub, "rtm/subscribe", map[string]any{"channel": "chat"})["action"]; a != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %v", a)
	}
	pub, err := s.wss(t, s.ca.Roots())
	if err != nil {
		t.Fatal(err)
	}
	if a := rtmCall(t, pub, "rtm/publish", map[string]any{"channel": "chat", "message": "over tls"})["action"]; a != "rtm/publish/ok" {
		t.Fatalf("publish: %v", a)
	}
	data := rtmNext(t, sub)
	if msgs, _ := data["body"].(map[string]any)["messages"].([]any); data["action"] != "rtm/subscription/data" || len(msgs) != 1 || msgs[0] != "over tls" {
		t.Fatalf("subscriber got %v", data)
	}

	// Plain HTTP is redirected, whatever the path.
	req, _ := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d/v2?appkey=demo", s.httpPort), nil)
	req.Host = s.domain
	resp, err := s.client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("https://%s:%d/v2?appkey=demo", s.domain, s.httpsPort); resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Errorf("HTTP answered %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	// A client with other roots (here: none) is refused.
	_, err = s.wss(t, x509.NewCertPool())
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("wss trusting no root: %v, want an unknown authority error", err)
	}

	resp, err = s.client(s.ca.Roots()).Get("https://" + s.domain + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`sluice_tls_certificate_expiry_timestamp_seconds{domain="edge.sluice.test"}`, "sluice_tls_certificates_obtained_total 1"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if n := s.ca.Orders(); n != 1 {
		t.Errorf("the CA saw %d orders, want 1", n)
	}
}

// TestTLSEdgeEachChallenge obtains a certificate with only one challenge
// enabled: http-01 through the HTTP listener, tls-alpn-01 through the
// HTTPS listener with no HTTP listener at all.
func TestTLSEdgeEachChallenge(t *testing.T) {
	for _, tc := range []struct {
		name, challenge string
		httpListen      string // "" for the setup's
	}{
		{name: "http-01", challenge: "http-01"},
		{name: "tls-alpn-01", challenge: "tls-alpn-01", httpListen: "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTLSSetup(t, tc.name+".sluice.test")
			s.startEdge(t, func(c *edgecmd.TLSConfig) {
				c.Challenges = []string{tc.challenge}
				if tc.httpListen != "" {
					c.HTTPListen = tc.httpListen
				}
			})
			ws, err := s.wss(t, s.ca.Roots())
			if err != nil {
				t.Fatalf("wss: %v", err)
			}
			if a := rtmCall(t, ws, "rtm/publish", map[string]any{"channel": "c", "message": 1})["action"]; a != "rtm/publish/ok" {
				t.Fatalf("publish: %v", a)
			}
			if n := s.ca.Orders(); n != 1 {
				t.Errorf("the CA saw %d orders, want 1", n)
			}
		})
	}
}

// TestTLSEdgeRestartReusesCertificate restarts the edge process on the
// same certificate directory: it serves the stored certificate without
// placing another order with the CA.
func TestTLSEdgeRestartReusesCertificate(t *testing.T) {
	s := newTLSSetup(t, "restart.sluice.test")
	first := s.startEdgeProcess(t)
	serial := s.serial(t)
	first.signal(t, syscall.SIGTERM)
	if code := first.exitCode(t, 15*time.Second); code != 0 {
		t.Fatalf("first edge exited %d", code)
	}

	s.startEdgeProcess(t)
	if got := s.serial(t); got != serial {
		t.Errorf("restarted edge serves serial %s, want the stored certificate's %s", got, serial)
	}
	if n := s.ca.Orders(); n != 1 {
		t.Errorf("the CA saw %d orders across the restart, want 1", n)
	}
}

package edgecmd

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/sluicehq/sluice/internal/testcert"
)

// tlsFullConfig sets every key of the tls and admin sections.
const tlsFullConfig = `
listen: 0.0.0.0:8443
tls:
  domains: [edge.example.com, edge2.example.com]
  email: ops@example.com
  acme_ca: https://acme-staging-v02.api.letsencrypt.org/directory
  acme_ca_root: ca.pem
  cert_dir: certs
  http_listen: 0.0.0.0:8080
  challenges: [tls-alpn-01]
  redirect_port: 443
admin:
  listen: 127.0.0.1:9090
`

func TestLoadTLSConfig(t *testing.T) {
	t.Parallel()
	path := writeEdgeConfig(t, tlsFullConfig)
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(path)
	want := TLSConfig{
		Domains: []string{"edge.example.com", "edge2.example.com"}, Email: "ops@example.com",
		ACMECA:     "https://acme-staging-v02.api.letsencrypt.org/directory",
		ACMECARoot: filepath.Join(dir, "ca.pem"), CertDir: filepath.Join(dir, "certs"),
		HTTPListen: "0.0.0.0:8080", Challenges: []string{"tls-alpn-01"}, RedirectPort: 443,
	}
	if !reflect.DeepEqual(c.TLS, want) {
		t.Fatalf("tls = %+v\nwant %+v", c.TLS, want)
	}
	if c.Admin.Listen != "127.0.0.1:9090" || c.ListenAddr() != "0.0.0.0:8443" {
		t.Fatalf("admin %q, listen %q", c.Admin.Listen, c.ListenAddr())
	}
	o := c.TLS.options(8443, 8080, "0.0.0.0")
	if !o.DisableHTTPChallenge || o.DisableTLSALPNChallenge || o.TLSPort != 8443 || o.HTTPPort != 8080 {
		t.Fatalf("manager options %+v", o)
	}
}

func TestListenDefaults(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, config, listen, http string
	}{
		{name: "plain", config: "", listen: "127.0.0.1:8080"},
		{name: "acme", config: "tls: {domains: [edge.example.com]}", listen: ":443", http: ":80"},
		{name: "own certificate", config: "tls: {cert_file: c.pem, key_file: k.pem}", listen: ":443", http: ":80"},
		{name: "explicit", config: "listen: 127.0.0.1:9443\ntls: {domains: [edge.example.com], http_listen: 'off', challenges: [tls-alpn-01]}", listen: "127.0.0.1:9443"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig([]byte(tc.config))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if c.ListenAddr() != tc.listen || (c.TLS.enabled() && c.TLS.httpListen() != tc.http) {
				t.Fatalf("listen %q, http %q; want %q, %q", c.ListenAddr(), c.TLS.httpListen(), tc.listen, tc.http)
			}
		})
	}
}

func TestTLSConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, config, want string
	}{
		{name: "unknown key", config: "tls:\n  domains: [a.example.com]\n  domian: x\n", want: `"domian"`},
		{name: "bad domain", config: "tls: {domains: [localhost]}", want: "tls.domains[0]"},
		{name: "wildcard", config: "tls: {domains: ['*.example.com']}", want: "dns-01"},
		{name: "both sources", config: "tls: {domains: [a.example.com], cert_file: c, key_file: k}", want: "not both"},
		{name: "cert without key", config: "tls: {cert_file: c}", want: "key file"},
		{name: "unknown challenge", config: "tls: {domains: [a.example.com], challenges: [dns-01]}", want: "tls.challenges[0]"},
		{name: "http-01 without http", config: "tls: {domains: [a.example.com], http_listen: 'off', challenges: [http-01]}", want: "tls.http_listen"},
		{name: "bad http listen", config: "tls: {domains: [a.example.com], http_listen: '80'}", want: "tls.http_listen"},
		{name: "bad redirect port", config: "tls: {domains: [a.example.com], redirect_port: 70000}", want: "tls.redirect_port"},
		{name: "bad admin listen", config: "admin: {listen: '9090'}", want: "admin.listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseConfig([]byte(tc.config))
			if err == nil {
				err = c.Validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestEdgeServesOperatorCertificate runs the edge with tls.cert_file and
// tls.key_file: WSS and the health endpoints over TLS, and the HTTP listener
// redirecting to HTTPS.
func TestEdgeServesOperatorCertificate(t *testing.T) {
	certFile, keyFile := testcert.SelfSigned(t, t.TempDir(), "localhost", 7)
	pool := testcert.Pool(t, certFile)
	e := startTestEdge(t, fmt.Sprintf("tls: {cert_file: %q, key_file: %q, http_listen: 127.0.0.1:0}\n", certFile, keyFile))
	if !strings.HasPrefix(e.url, "wss://localhost:") || e.plain == "" {
		t.Fatalf("banner: url %q, http %q\n%s", e.url, e.plain, e.out.String())
	}
	_, port, _ := net.SplitHostPort(e.addr)
	client := &http.Client{
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool},
			DialContext:     (&net.Dialer{}).DialContext,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://127.0.0.1:" + port + "/readyz")
	if err == nil {
		resp.Body.Close()
		t.Fatalf("a client checking the name 127.0.0.1 against a localhost certificate connected (%d)", resp.StatusCode)
	}
	c := dialJSON(t, "wss://localhost:"+port+"/v2?appkey=demo", &websocket.DialOptions{HTTPClient: client})
	if a, _ := c.call("rtm/publish", map[string]any{"channel": "chat", "message": 1}); a != "rtm/publish/ok" {
		t.Fatalf("publish over wss: %s", a)
	}
	resp, err = client.Get("https://localhost:" + port + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/readyz over https: %v %v", err, resp)
	}
	resp.Body.Close()
	resp, err = client.Get("http://" + e.plain + "/v2?appkey=demo")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := "https://" + strings.Split(e.plain, ":")[0] + ":" + port + "/v2?appkey=demo"
	if resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
		t.Fatalf("HTTP answered %d %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

package edgecmd

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/testcert"
)

// Fragments of the two warnings of a public TLS edge.
const (
	originWarned  = "cross-site WebSocket hijacking); set allowed_origins"
	metricsWarned = "/metrics is served on the public listener"
)

// connectHookApp is an app whose connect hook sees the browser's cookies.
const connectHookApp = `apps:
  - appkey: web
    hooks: {connect: "https://app.example.com/sluice/connect", secret: 0123456789abcdef0123}
`

// TestExposureWarnings: an edge serving TLS on a public address (ACME
// domains, or a listen address that is not loopback) warns of any origin
// beside a connect hook, and of /metrics without admin.listen, each
// naming what to set; a local edge, restricted origins, an app without a
// connect hook and admin.listen each silence theirs.
func TestExposureWarnings(t *testing.T) {
	t.Parallel()
	const (
		acme    = "tls: {domains: [edge.example.com]}\n"
		ownCert = "tls: {cert_file: c.pem, key_file: k.pem}\n"
		admin   = "admin: {listen: 127.0.0.1:9090}\n"
	)
	tests := []struct {
		name            string
		config          string
		origins, metric bool // whether each warning is due
	}{
		{name: "local, plain", config: connectHookApp},
		{name: "acme", config: acme + connectHookApp, origins: true, metric: true},
		{name: "acme, admin listener", config: acme + admin + connectHookApp, origins: true},
		{name: "acme, origins listed", config: acme + admin + "allowed_origins: [app.example.com]\n" + connectHookApp},
		{name: "acme, origins with a star", config: acme + admin + "allowed_origins: [app.example.com, \"*\"]\n" + connectHookApp, origins: true},
		{name: "acme, no connect hook", config: acme + admin},
		{name: "own certificate on :443", config: ownCert + connectHookApp, origins: true, metric: true},
		{name: "own certificate on a public IP", config: ownCert + "listen: 203.0.113.7:443\n" + connectHookApp, origins: true, metric: true},
		{name: "own certificate on loopback", config: ownCert + "listen: 127.0.0.1:8443\n" + connectHookApp},
		{name: "own certificate on localhost", config: ownCert + "listen: localhost:8443\n" + connectHookApp},
		{name: "own certificate on IPv6 loopback", config: ownCert + "listen: \"[::1]:8443\"\n" + connectHookApp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadConfig(writeEdgeConfig(t, tt.config))
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(c.Warnings(), "\n")
			if strings.Contains(got, originWarned) != tt.origins || strings.Contains(got, metricsWarned) != tt.metric {
				t.Fatalf("warnings:\n%s\nwant origins %v, metrics %v", got, tt.origins, tt.metric)
			}
			if tt.origins && !strings.Contains(got, `apps[0] ("web") has a connect hook`) {
				t.Errorf("the origins warning does not name the app: %s", got)
			}
			if tt.metric && !strings.Contains(got, "set admin.listen") {
				t.Errorf("the metrics warning does not name admin.listen: %s", got)
			}
		})
	}
}

// TestPublicEdgeLogsExposure starts an edge with its own certificate on
// every interface, any origin, a connect hook and no admin listener: it
// logs both warnings at start, and /metrics is indeed on the public
// listener, as the warning says.
func TestPublicEdgeLogsExposure(t *testing.T) {
	certFile, keyFile := testcert.SelfSigned(t, t.TempDir(), "localhost", 7)
	e := startTestEdge(t, fmt.Sprintf("listen: 0.0.0.0:0\ntls: {cert_file: %q, key_file: %q, http_listen: off}\n", certFile, keyFile)+connectHookApp)
	logs := e.logs.String()
	for _, want := range []string{originWarned, metricsWarned, "set admin.listen"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the start's logs lack %q:\n%s", want, logs)
		}
	}
	_, port, _ := net.SplitHostPort(e.addr)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: testcert.Pool(t, certFile)}}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://localhost:" + port + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics on the public listener: %d, want 200 (what the warning says)", resp.StatusCode)
	}
}

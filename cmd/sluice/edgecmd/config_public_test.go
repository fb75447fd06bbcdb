package edgecmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/testcert"
)

// originWarned is a fragment of the origins warning of a public TLS edge.
const originWarned = "cross-site WebSocket hijacking); set allowed_origins"

// connectHookApp is an app whose connect hook sees the browser's cookies.
const connectHookApp = `apps:
  - appkey: web
    hooks: {connect: "https://app.example.com/sluice/connect", secret: 0123456789abcdef0123}
`

// TestExposureWarnings: an edge serving TLS on a public address (ACME
// domains, or a listen address that is not loopback) warns of any origin
// beside a connect hook, naming what to set; a local edge, restricted
// origins and an app without a connect hook silence it.
func TestExposureWarnings(t *testing.T) {
	t.Parallel()
	const (
		acme    = "tls: {domains: [edge.example.com]}\n"
		ownCert = "tls: {cert_file: c.pem, key_file: k.pem}\n"
		admin   = "admin: {listen: 127.0.0.1:9090}\n"
	)
	tests := []struct {
		name    string
		config  string
		origins bool // whether the warning is due
	}{
		{name: "local, plain", config: connectHookApp},
		{name: "acme", config: acme + connectHookApp, origins: true},
		{name: "acme, origins listed", config: acme + admin + "allowed_origins: [app.example.com]\n" + connectHookApp},
		{name: "acme, origins with a star", config: acme + admin + "allowed_origins: [app.example.com, \"*\"]\n" + connectHookApp, origins: true},
		{name: "acme, no connect hook", config: acme + admin},
		{name: "own certificate on :443", config: ownCert + connectHookApp, origins: true},
		{name: "own certificate on a public IP", config: ownCert + "listen: 203.0.113.7:443\n" + connectHookApp, origins: true},
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
			if strings.Contains(got, originWarned) != tt.origins {
				t.Fatalf("warnings:\n%s\nwant origins %v", got, tt.origins)
			}
			if tt.origins && !strings.Contains(got, `apps[0] ("web") has a connect hook`) {
				t.Errorf("the origins warning does not name the app: %s", got)
			}
		})
	}
}

// TestPublicEdgeLogsExposure starts an edge with its own certificate on
// every interface, any origin and a connect hook: it logs the warning at
// start.
func TestPublicEdgeLogsExposure(t *testing.T) {
	certFile, keyFile := testcert.SelfSigned(t, t.TempDir(), "localhost", 7)
	e := startTestEdge(t, fmt.Sprintf("listen: 0.0.0.0:0\ntls: {cert_file: %q, key_file: %q, http_listen: off}\n", certFile, keyFile)+connectHookApp)
	logs := e.logs.String()
	for _, want := range []string{originWarned} {
		if !strings.Contains(logs, want) {
			t.Errorf("the start's logs lack %q:\n%s", want, logs)
		}
	}
}

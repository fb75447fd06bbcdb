package deploy

// deploy/compose.yaml, read strictly: three edges wired into one cluster
// (compose/edge.yaml) behind Caddy (compose/Caddyfile). compose_run_test.go
// starts it.

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
)

const (
	composeFile   = "compose.yaml"
	composeConfig = "compose/edge.yaml"
	caddyFile     = "compose/Caddyfile"
	// Where the edges' image reads its configuration (SLUICE_CONFIG).
	imageConfigPath = "/etc/sluice/edge.yaml"
)

// compose is the part of the Compose specification the file uses; any
// other key is an error, as a typo would be.
type compose struct {
	Edge     composeService            `yaml:"x-edge"` // the edges' common part, merged into each
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]*struct{}      `yaml:"volumes"`
	Secrets  map[string]struct {
		File string `yaml:"file"`
	} `yaml:"secrets"`
}

type composeService struct {
	Image           string            `yaml:"image"`
	Restart         string            `yaml:"restart"`
	StopGracePeriod string            `yaml:"stop_grace_period"`
	Secrets         []string          `yaml:"secrets"`
	Environment     map[string]string `yaml:"environment"`
	Volumes         []string          `yaml:"volumes"`
	Ports           []string          `yaml:"ports"`
	DependsOn       []string          `yaml:"depends_on"`
}

// readCompose decodes compose.yaml strictly.
func readCompose(t *testing.T) *compose {
	t.Helper()
	data, err := os.ReadFile(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var c compose
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return &c
}

// edgeServices returns the names of the services that run the image's
// edge (those with the edges' secret), sorted.
func (c *compose) edgeServices() []string {
	var out []string
	for name, s := range c.Services {
		if s.Image == c.Edge.Image {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// readComposeConfig loads the edges' configuration as an edge in the
// compose file reads it, its secret file replaced by one of t's.
func readComposeConfig(t *testing.T) *edgecmd.Config {
	t.Helper()
	cfg, err := edgecmd.ReadConfig(composeConfig)
	if err != nil {
		t.Fatal(err)
	}
	token := filepath.Join(t.TempDir(), "cluster-token")
	if err := os.WriteFile(token, []byte("a-cluster-token-for-the-test-0123456789\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	secret := cfg.Cluster.TokenFile
	cfg.Cluster.TokenFile = token
	if err := cfg.Validate(); err != nil {
		t.Fatalf("%s: %v", composeConfig, err)
	}
	cfg.Cluster.TokenFile = secret
	return cfg
}

// TestComposeFile checks the wiring of the compose file: three edges, each
// with its own volume at the configuration's data directory, its node
// name, the configuration and the token mounted where the configuration
// reads them, routes naming the three services, a stop grace period
// longer than the drain; Caddy in front, sending clients to the three
// edges' client port once their /readyz says so, more often than the
// drain delay.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	c := readCompose(t)
	cfg := readComposeConfig(t)
	edges := c.edgeServices()
	if len(edges) != 3 || !strings.HasPrefix(c.Edge.Image, "${SLUICE_IMAGE:-") {
		t.Fatalf("edge services %q of image %q: want three, the image from SLUICE_IMAGE", edges, c.Edge.Image)
	}
	drain := drainOf(t, composeConfig, cfg.Limits)
	if grace, err := time.ParseDuration(c.Edge.StopGracePeriod); err != nil || grace <= drain {
		t.Fatalf("stop_grace_period %q is not longer than the drain of %s (%v)", c.Edge.StopGracePeriod, composeConfig, drain)
	}
	if len(c.Edge.Secrets) != 1 || cfg.Cluster.TokenFile != "/run/secrets/"+c.Edge.Secrets[0] || c.Secrets[c.Edge.Secrets[0]].File == "" {
		t.Fatalf("secrets %q (%+v): want the one %s reads, %s", c.Edge.Secrets, c.Secrets, composeConfig, cfg.Cluster.TokenFile)
	}
	_, port, err := net.SplitHostPort(cfg.Cluster.Listen)
	if err != nil {
		t.Fatal(err)
	}
	var routes []string
	volumes := map[string]bool{}
	for _, name := range edges {
		s := c.Services[name]
		routes = append(routes, "nats-route://"+net.JoinHostPort(name, port))
		if s.Environment["SLUICE_NODE_NAME"] != name || !slices.Equal(s.Secrets, c.Edge.Secrets) {
			t.Errorf("%s: environment %v, secrets %q: want its name as the node's and the edges' secret", name, s.Environment, s.Secrets)
		}
		vol, ok := mountOf(s.Volumes, cfg.Cluster.DataDir)
		if _, declared := c.Volumes[vol]; !ok || !declared || volumes[vol] {
			t.Errorf("%s: volumes %q: want a named volume of its own at %s", name, s.Volumes, cfg.Cluster.DataDir)
		}
		volumes[vol] = true
		if src, ok := mountOf(s.Volumes, imageConfigPath+":ro"); !ok || filepath.Clean(src) != composeConfig {
			t.Errorf("%s: volumes %q: want ./%s at %s", name, s.Volumes, composeConfig, imageConfigPath)
		}
	}
	if !slices.Equal(cfg.Cluster.Routes, routes) {
		t.Errorf("%s routes %q, want the services' %q", composeConfig, cfg.Cluster.Routes, routes)
	}
	checkCaddy(t, c, edges, cfg, drain)
}

// mountOf returns the source of the volume mounted at target ("SRC:TARGET").
func mountOf(volumes []string, target string) (string, bool) {
	for _, v := range volumes {
		if src, ok := strings.CutSuffix(v, ":"+target); ok {
			return src, true
		}
	}
	return "", false
}

// checkCaddy checks the load balancer's service and its Caddyfile.
func checkCaddy(t *testing.T, c *compose, edges []string, cfg *edgecmd.Config, drain time.Duration) {
	t.Helper()
	lb, ok := c.Services["lb"]
	if !ok || !strings.Contains(lb.Image, "caddy") || len(lb.Ports) != 1 || !strings.HasSuffix(lb.Ports[0], ":80") {
		t.Fatalf("service lb %+v: want Caddy, publishing its port 80", lb)
	}
	if src, ok := mountOf(lb.Volumes, "/etc/caddy/Caddyfile:ro"); !ok || filepath.Clean(src) != caddyFile {
		t.Fatalf("lb volumes %q: want ./%s at Caddy's /etc/caddy/Caddyfile", lb.Volumes, caddyFile)
	}
	proxy := caddyDirective(t, "reverse_proxy")
	_, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	var upstreams []string
	for _, e := range edges {
		upstreams = append(upstreams, net.JoinHostPort(e, port))
	}
	if !slices.Equal(proxy, upstreams) {
		t.Fatalf("%s: reverse_proxy %q, want the edges' client ports %q", caddyFile, proxy, upstreams)
	}
	if uri := caddyDirective(t, "health_uri"); !slices.Equal(uri, []string{"/readyz"}) {
		t.Fatalf("%s: health_uri %q, want /readyz", caddyFile, uri)
	}
	interval, err := time.ParseDuration(strings.Join(caddyDirective(t, "health_interval"), ""))
	if delay := time.Duration(*cfg.Limits.DrainDelay); err != nil || interval >= delay {
		t.Fatalf("%s: health_interval %v (%v): want it well under drain_delay %v, so that a draining edge is seen", caddyFile, interval, err, delay)
	}
}

// caddyDirective returns the arguments of the Caddyfile's one line that
// starts with directive, failing t unless there is exactly one.
func caddyDirective(t *testing.T, directive string) []string {
	t.Helper()
	data, err := os.ReadFile(caddyFile)
	if err != nil {
		t.Fatal(err)
	}
	var found [][]string
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == directive {
			found = append(found, slices.DeleteFunc(f[1:], func(s string) bool { return s == "{" }))
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d %s lines, want one", caddyFile, len(found), directive)
	}
	return found[0]
}

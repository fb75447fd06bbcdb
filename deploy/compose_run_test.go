package deploy

// deploy/compose.yaml started with podman-compose: the image `make image`
// builds as its edges, Caddy in front. An edge stopped as compose stops
// it (SIGTERM) drains; the chat goes on through Caddy, and its
// subscribers resume on the other edges without a gap.

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
)

// composeProject is the compose file running in a directory of its own.
type composeProject struct {
	c     *containers
	dir   string
	name  string   // the project's, prefixing its containers, volumes, network
	env   []string // SLUICE_IMAGE, SLUICE_PORT for the file
	lb    string   // Caddy's published address, host:port
	edges []string // the edges' services
	grace string   // their stop_grace_period
}

// composeOverride runs Caddy from the image of Debian's Caddy that
// buildCaddy assembles, instead of the registry's.
const composeOverride = "services:\n  lb:\n    image: %s\n"

// startCompose copies the compose file and what it mounts to a
// directory, adds the secret file an operator makes (openssl rand) and
// starts it; it is taken down, volumes and network included, when the
// test ends.
func startCompose(t *testing.T) *composeProject {
	t.Helper()
	c := podmanRuntime(t)
	spec := readCompose(t)
	p := &composeProject{c: c, dir: t.TempDir(), name: uniqueName("compose"), edges: spec.edgeServices(), grace: spec.Edge.StopGracePeriod}
	p.lb = fmt.Sprintf("127.0.0.1:%d", journaltest.FreePorts(t, 1)[0])
	p.env = append(c.env, "SLUICE_IMAGE="+c.image, "SLUICE_PORT="+p.lb)
	for _, f := range []string{composeFile, composeConfig, caddyFile} {
		copyFile(t, f, filepath.Join(p.dir, f), 0o644)
	}
	token := make([]byte, 32)
	rand.Read(token)
	writeFile(t, filepath.Join(p.dir, spec.Secrets[spec.Edge.Secrets[0]].File), base64.StdEncoding.EncodeToString(token)+"\n")
	writeFile(t, filepath.Join(p.dir, "override.yaml"), fmt.Sprintf(composeOverride, c.caddy))
	t.Cleanup(func() { p.down(t) })
	p.compose(t, "up", "-d")
	return p
}

// compose runs podman-compose on the project.
func (p *composeProject) compose(t *testing.T, args ...string) {
	t.Helper()
	if err := p.composeCtx(context.Background(), args...); err != nil {
		t.Fatal(err)
	}
}

func (p *composeProject) composeCtx(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "podman-compose", append([]string{"-p", p.name, "-f", composeFile, "-f", "override.yaml"}, args...)...)
	cmd.Dir, cmd.Env = p.dir, p.env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("podman-compose %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// container names a service's container.
func (p *composeProject) container(service string) string {
	return p.name + "_" + service + "_1"
}

// down logs the containers' output if the test failed, and removes the
// project.
func (p *composeProject) down(t *testing.T) {
	if t.Failed() {
		for _, s := range append([]string{"lb"}, p.edges...) {
			t.Logf("%s's logs:\n%s", s, p.c.logs(p.container(s)))
		}
	}
	if err := p.composeCtx(context.Background(), "down", "--volumes", "--timeout", "1"); err != nil {
		t.Error(err)
	}
	p.c.run("podman", "network", "rm", "--force", p.name+"_default")
}

// connections returns the WebSocket connections the edge of service
// holds, from its /metrics on the admin port (which compose does not
// publish: asked at the container's address on the project's network).
func (p *composeProject) connections(t *testing.T, service string) int {
	t.Helper()
	ip := p.c.must(t, "podman", "inspect", "--format", "{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}", p.container(service))
	resp, err := http.Get("http://" + net.JoinHostPort(ip, "9090") + "/metrics")
	if err != nil {
		t.Fatalf("%s's /metrics: %v", service, err)
	}
	defer resp.Body.Close()
	n := -1
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), "sluice_server_connections "); ok {
			if n, err = strconv.Atoi(v); err != nil {
				t.Fatalf("%s's /metrics: %s", service, sc.Text())
			}
		}
	}
	if n < 0 {
		t.Fatalf("%s's /metrics has no sluice_server_connections", service)
	}
	return n
}

// ready reports whether the edge of service answers /readyz with 200,
// asked inside its container.
func (p *composeProject) ready(service string) bool {
	_, err := p.c.run("podman", "exec", p.container(service), "/"+imageBinary, "health", "--ready")
	return err == nil
}

// TestComposeCluster starts the compose file and chats through Caddy:
// three subscribers and a publisher. The first subscriber's edge is
// stopped as compose stops it while the publisher goes on: it drains and
// exits 0, and every subscriber, the one that moved to another edge
// included, gets every acknowledged message once, in order, without a
// gap. A client connecting then chats too; the edge, started again on
// its volume, becomes ready; and the demo chat page works through Caddy
// in a browser.
func TestComposeCluster(t *testing.T) {
	t.Parallel()
	p := startCompose(t)
	p.waitReady(t)
	url := "ws://" + p.lb
	// The first subscriber's edge is the one stopped.
	subs := []*chatter{dialChatter(t, url)}
	subs[0].subscribe(t, "room")
	victim := p.onlyConnected(t)
	for range 2 {
		subs = append(subs, dialChatter(t, url))
		subs[len(subs)-1].subscribe(t, "room")
	}
	pub := dialChatter(t, url)
	acked, next := publishAll(t, pub, "room", 1, 20)

	stopped := p.stopDuring(t, victim)
	during, next := publishAll(t, pub, "room", next, 20)
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s did not stop within 2 minutes", victim)
	}
	if code := p.c.must(t, "podman", "inspect", "--format", "{{.State.ExitCode}}", p.container(victim)); code != "0" {
		t.Fatalf("%s exited %s when stopped, want 0: a drain cut short?", victim, code)
	}
	after, next := publishAll(t, pub, "room", next, 20)
	acked = append(append(acked, during...), after...)
	for i, s := range subs {
		what := fmt.Sprintf("subscriber %d", i)
		poll.UntilNil(t, what+" to get every message", func() error { return s.awaits(acked[len(acked)-1]) })
		s.check(t, what, acked)
	}
	if !subs[0].reconnected() {
		t.Fatalf("the subscriber on %s did not reconnect when it stopped", victim)
	}

	late := dialChatter(t, url)
	late.subscribe(t, "room")
	last, _ := publishAll(t, pub, "room", next, 1)
	poll.UntilNil(t, "a client connected with "+victim+" down to chat", func() error { return late.awaits(last[0]) })

	p.compose(t, "start", victim)
	poll.Within(t, 2*time.Minute, victim+" to be ready again", func() bool { return p.ready(victim) })
	chatInBrowser(t, "http://"+p.lb)
	t.Logf("%d messages through Caddy across the stop of %s, whose subscriber resumed on another edge", len(acked), victim)
}

// waitReady waits for every edge to be ready, and for Caddy to have
// seen one.
func (p *composeProject) waitReady(t *testing.T) {
	t.Helper()
	for _, e := range p.edges {
		poll.Within(t, 2*time.Minute, e+" to be ready", func() bool { return p.ready(e) })
	}
	poll.Within(t, time.Minute, "Caddy to find the edges ready", func() bool {
		resp, err := http.Get("http://" + p.lb + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// onlyConnected returns the edge that holds the one connection of the
// cluster, once its /metrics counts it.
func (p *composeProject) onlyConnected(t *testing.T) string {
	t.Helper()
	var holder string
	poll.Until(t, "an edge to count the one connection", func() bool {
		holder = ""
		for _, e := range p.edges {
			switch p.connections(t, e) {
			case 0:
			case 1:
				holder += e
			default:
				return false
			}
		}
		return slices.Contains(p.edges, holder)
	})
	return holder
}

// stopDuring stops service as compose does, with SIGTERM and its stop
// grace period, and says when it has; the command is killed if the test
// ends first.
func (p *composeProject) stopDuring(t *testing.T, service string) <-chan error {
	t.Helper()
	grace, err := time.ParseDuration(p.grace)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		stopped <- p.composeCtx(ctx, "stop", "--timeout", fmt.Sprint(grace.Seconds()), service)
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	return stopped
}

// copyFile copies src to dst, making dst's directory.
func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, mode); err != nil {
		t.Fatal(err)
	}
}

// writeFile writes data to path, readable by the edges' user.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

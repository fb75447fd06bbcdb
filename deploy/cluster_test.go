package deploy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/internal/syncbuf"
)

// TestKubernetesConfigFormsCluster runs the three pods' edges in this
// process, each with the ConfigMap's edge.yaml as the pod reads it and
// what the pod adds (--node-name, the Secret's token), and checks that
// they form a cluster and all become ready. Only the addresses change:
// loopback ports for the pods' listeners, and each route's pod name
// (sluice-N.sluice-cluster) for the port of pod N.
func TestKubernetesConfigFormsCluster(t *testing.T) {
	t.Parallel()
	c := buildCluster(t)
	replicas := int(*c.sts.Spec.Replicas)
	ports := journaltest.FreePorts(t, replicas)
	token := filepath.Join(t.TempDir(), tokenKey)
	if err := os.WriteFile(token, []byte(c.token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgs := make([]*edgecmd.Config, replicas)
	for i := range cfgs {
		cfg := edgeOf(t, c).cfg
		cfg.Listen, cfg.Admin.Listen = "127.0.0.1:0", "127.0.0.1:0"
		cfg.Cluster.Listen = "127.0.0.1:" + strconv.Itoa(ports[i])
		cfg.Cluster.DataDir = t.TempDir()
		cfg.Cluster.TokenFile = token
		cfg.Cluster.NodeName = fmt.Sprintf("%s-%d", c.sts.Name, i) // --node-name $(POD_NAME)
		for j, r := range cfg.Cluster.Routes {
			cfg.Cluster.Routes[j] = loopbackRoute(t, c.sts.Name, r, ports)
		}
		cfgs[i] = cfg
	}

	// Each waits for a quorum of the others: all start at once, as the
	// StatefulSet's Parallel pod management starts the pods.
	edges := make([]*edgecmd.Edge, replicas)
	logs := make([]syncbuf.Buffer, replicas)
	errs := make([]error, replicas)
	var wg sync.WaitGroup
	for i := range edges {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			edges[i], errs[i] = edgecmd.Start(ctx, cfgs[i], &edgecmd.Options{Stdout: io.Discard, Stderr: &logs[i]})
		})
	}
	wg.Wait()
	for i, e := range edges {
		t.Cleanup(func() {
			if e != nil {
				if err := e.Close(); err != nil {
					t.Errorf("edge %d stopped with %v", i, err)
				}
			}
			if t.Failed() {
				t.Logf("edge %d's logs:\n%s", i, logs[i].String())
			}
		})
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("edge %d (%s) did not start: %v", i, cfgs[i].Cluster.NodeName, err)
		}
	}
	for i, e := range edges {
		admin := "http://" + e.Info().Admin
		poll.Until(t, fmt.Sprintf("edge %d ready", i), func() bool {
			code, _ := get(t, admin+"/readyz")
			return code == http.StatusOK
		})
		if _, body := get(t, admin+"/metrics"); !strings.Contains(body, "\nsluice_server_ready 1\n") {
			t.Errorf("edge %d is ready, and its /metrics lacks sluice_server_ready 1", i)
		}
	}
}

// loopbackRoute maps a route to a pod, nats-route://NAME-N.SERVICE:PORT,
// to the loopback port of pod N.
func loopbackRoute(t *testing.T, sts, route string, ports []int) string {
	t.Helper()
	u, err := url.Parse(route)
	if err != nil {
		t.Fatal(err)
	}
	pod, _, _ := strings.Cut(u.Hostname(), ".")
	n, err := strconv.Atoi(strings.TrimPrefix(pod, sts+"-"))
	if err != nil || n < 0 || n >= len(ports) {
		t.Fatalf("route %s names no pod of %d", route, len(ports))
	}
	return "nats-route://127.0.0.1:" + strconv.Itoa(ports[n])
}

// get returns the status and body of an HTTP GET; 0 when it fails.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, ""
	}
	return resp.StatusCode, string(body)
}

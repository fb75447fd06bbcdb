package journal_test

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
)

// TestRouteTokenLocksTheCluster: nodes that share a route token form a
// cluster whose stream replicates, and a route that does not present the
// token is refused, so a stranger who reaches the cluster port cannot
// join and read the stream.
func TestRouteTokenLocksTheCluster(t *testing.T) {
	ports := journaltest.FreePorts(t, 2)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	nodes := make([]*journal.Node, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			nodes[i], errs[i] = journal.StartNode(&journal.NodeOptions{
				DataDir: t.TempDir(), Name: "n" + strconv.Itoa(i), ClusterName: "locked",
				ClusterListen: fmt.Sprintf("127.0.0.1:%d", ports[i]), Routes: routes,
				RouteToken: "s3cret-shared-by-the-nodes", Logger: journaltest.Logger(),
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		t.Cleanup(nodes[i].Close)
	}
	// Two replicas need both nodes: a publish acknowledged means the
	// routes authenticated each other.
	j := journaltest.Open(t, nodes[0], &journal.Options{Replicas: 2})
	done := make(chan error, 1)
	j.Publish("app\x00room", []byte("hello"), func(_ uint64, err error) { done <- err })
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("publish on the locked cluster: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("publish on the locked cluster: no answer")
	}

	for _, tc := range []struct{ name, creds string }{
		{"no token", ``},
		{"wrong token", `"user":"sluice","pass":"guess",`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialRoutePort(t, ports[0])
			r := bufio.NewReader(c)
			if line, err := r.ReadString('\n'); err != nil || !strings.HasPrefix(line, "INFO ") {
				t.Fatalf("route port greeted with %q, %v", line, err)
			}
			fmt.Fprintf(c, "CONNECT {%s\"cluster\":\"locked\",\"name\":\"stranger\",\"headers\":true}\r\nPING\r\n", tc.creds)
			var got []string
			for {
				line, err := r.ReadString('\n')
				if line != "" {
					got = append(got, strings.TrimSpace(line))
				}
				if err != nil {
					break // the node closed the connection
				}
			}
			if len(got) == 0 || !strings.Contains(got[0], "Authorization Violation") {
				t.Fatalf("a route with %s got %q, want an authorization violation and the connection closed", tc.name, got)
			}
			for _, l := range got {
				if l == "PONG" {
					t.Fatalf("a route with %s was served: %q", tc.name, got)
				}
			}
		})
	}
}

// TestEdgeDialsOnlyItsNode: a cluster announces its nodes' client
// listeners; the edge's connection must not take them (each is another
// node's random loopback port with its own token, or nothing at all on
// another host), or a reconnect could go there.
func TestEdgeDialsOnlyItsNode(t *testing.T) {
	nodes := journaltest.Cluster(t, 2)
	journaltest.Open(t, nodes[0], &journal.Options{Replicas: 2}) // the routes are up once a replicated stream exists
	nc, err := nodes[0].Connect("probe")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := nc.Servers(); len(got) != 1 {
		t.Fatalf("the edge's connection would dial %v, want its own node alone", got)
	}
}

// dialRoutePort connects to a node's route port as a stranger would, for
// 10 s at most; the test's cleanup closes the connection.
func dialRoutePort(t *testing.T, port int) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	return c
}

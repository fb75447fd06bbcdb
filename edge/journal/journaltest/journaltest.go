// Package journaltest starts real NATS JetStream nodes, alone or in a
// cluster, and journals on them, for the tests of what is built on
// edge/journal. Everything it starts stops when the test ends.
package journaltest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
)

// Logger discards what it is given.
func Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// FreePorts returns n loopback TCP ports that were free a moment ago.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	var lns []net.Listener
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// Node starts a single embedded node with JetStream in a fresh directory.
func Node(t testing.TB) *journal.Node {
	t.Helper()
	n, err := journal.StartNode(&journal.NodeOptions{DataDir: t.TempDir(), Logger: Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// Cluster starts n embedded nodes that form one JetStream cluster.
func Cluster(t testing.TB, n int) []*journal.Node {
	t.Helper()
	ports := FreePorts(t, n)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	nodes := make([]*journal.Node, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		// At once: each waits for the others to route to it.
		wg.Go(func() {
			nodes[i], errs[i] = journal.StartNode(&journal.NodeOptions{
				DataDir: t.TempDir(), Name: "n" + strconv.Itoa(i), ClusterName: "test",
				ClusterListen: fmt.Sprintf("127.0.0.1:%d", ports[i]), Routes: routes, Logger: Logger(),
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
	return nodes
}

// Open connects to node and opens a journal on its stream (opts nil:
// the defaults, quiet).
func Open(t testing.TB, node *journal.Node, opts *journal.Options) *journal.Journal {
	t.Helper()
	nc, err := node.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	o := journal.Options{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = Logger()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	j, err := journal.Open(ctx, nc, &o)
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		j.Close()
		nc.Close()
	})
	return j
}

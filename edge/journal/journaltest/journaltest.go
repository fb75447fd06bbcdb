// Package journaltest starts real NATS JetStream nodes, alone or in a
// cluster, and journals on them, for the tests of what is built on
// edge/journal. Everything it starts stops when the test ends.
package journaltest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
)

// Logger discards what it is given.
func Logger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// FreePorts returns n loopback TCP ports that were free a moment ago.
// They are drawn at random below the kernel's ephemeral range: a port the
// kernel handed out (listening on port 0) goes back to the pool every
// outgoing connection draws its local port from, and with other packages'
// tests dialling thousands of loopback connections one of them could take
// it before the node that was meant to listen there.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	lo, hi := 10000, ephemeralLow()
	var ports []int
	for tries := 0; len(ports) < n; tries++ {
		if tries > 1000 {
			t.Fatalf("no %d free ports in [%d, %d)", n, lo, hi)
		}
		p := lo + rand.IntN(hi-lo)
		if slices.Contains(ports, p) {
			continue
		}
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err != nil {
			continue // taken
		}
		ln.Close()
		ports = append(ports, p)
	}
	return ports
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// default when it cannot be read).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 32768
	}
	lo, err := strconv.Atoi(f[0])
	if err != nil || lo < 12000 {
		return 32768
	}
	return lo
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

// Cluster starts n embedded nodes that form one JetStream cluster. A
// port FreePorts found free can still be taken by another process before
// its node listens: then the nodes are stopped and started again on new
// ports.
func Cluster(t testing.TB, n int) []*journal.Node {
	t.Helper()
	return ClusterWith(t, n, journal.NodeOptions{})
}

// ClusterWith is Cluster with every node's options based on base (its
// sync settings, say): each node gets its own directory, name, cluster
// port and the routes, and a quiet logger unless base has one.
func ClusterWith(t testing.TB, n int, base journal.NodeOptions) []*journal.Node {
	t.Helper()
	for attempt := 1; ; attempt++ {
		nodes, err := startCluster(t, n, base)
		if err == nil {
			return nodes
		}
		if attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("cluster of %d, attempt %d: %v; again on other ports", n, attempt, err)
	}
}

func startCluster(t testing.TB, n int, base journal.NodeOptions) ([]*journal.Node, error) {
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
			o := base
			o.DataDir, o.Name, o.ClusterName = t.TempDir(), "n"+strconv.Itoa(i), "test"
			o.ClusterListen, o.Routes = fmt.Sprintf("127.0.0.1:%d", ports[i]), routes
			if o.Logger == nil {
				o.Logger = Logger()
			}
			nodes[i], errs[i] = journal.StartNode(&o)
		})
	}
	wg.Wait()
	var failed error
	for i, err := range errs {
		if err != nil && failed == nil {
			failed = fmt.Errorf("node %d: %w", i, err)
		}
	}
	if failed != nil {
		for _, node := range nodes {
			if node != nil {
				node.Close()
			}
		}
		return nil, failed
	}
	for _, node := range nodes {
		t.Cleanup(node.Close)
	}
	return nodes, nil
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

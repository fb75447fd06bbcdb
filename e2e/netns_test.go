package e2e

// Partitions for real: each edge runs in a Linux network namespace of its
// own, with two links, each to a bridge in the test's namespace: the
// route network, on which the edges' NATS nodes route to each other (and
// nothing else: the test's namespace has no address there), and the
// client network, on which the test reaches each edge's WebSocket and
// NATS client port. A cut takes a node's route link down: NATS gossip
// learns and dials the real route addresses, so no other path exists,
// while its clients stay connected. Needs root and iproute2 (`make test`
// installs iproute2); without them the test fails, saying so.

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// netLab is the namespaces, links and bridges of one test.
type netLab struct {
	t    *testing.T
	id   string   // short, unique to the lab in the test process: names fit in 15 bytes
	ns   []string // each node's namespace
	net  int      // the third byte of both networks' addresses
	cuts []string // each node's route link, on the test's side
}

// requireNetAdmin fails t unless it can make network namespaces.
func requireNetAdmin(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the partition tests make network namespaces: run them as root (make test installs iproute2)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Fatal("the partition tests need ip (iproute2): `make test` installs it, or apt-get install iproute2")
	}
}

// labs numbers the labs of the test process, and allocating guards
// picking a free network and taking it (the client bridge's address):
// labs run in parallel.
var (
	labs       atomic.Int32
	allocating sync.Mutex
)

// newNetLab makes n namespaces on the two bridges; its cleanup removes
// them all, whatever the test's outcome (register it before the
// processes in the namespaces, whose cleanups then run first). Labs of
// one test process may run in parallel: each has its own names and
// networks.
func newNetLab(t *testing.T, n int) *netLab {
	t.Helper()
	requireNetAdmin(t)
	pid := os.Getpid()
	l := &netLab{t: t, id: fmt.Sprintf("%03x%d", pid&0xfff, labs.Add(1))}
	t.Cleanup(l.remove)
	l.bridges(pid%250 + 1)
	for i := range n {
		ns := l.name(fmt.Sprintf("n%d", i))
		l.ns = append(l.ns, ns)
		l.ip("netns", "add", ns)
		l.ip("-n", ns, "link", "set", "lo", "up")
		for _, side := range []struct{ net, br, inner, addr string }{
			{"r", l.name("R"), "route", l.RouteIP(i)},
			{"c", l.name("C"), "client", l.ClientIP(i)},
		} {
			outer := l.name(fmt.Sprintf("%s%d", side.net, i))
			l.ip("link", "add", outer, "type", "veth", "peer", "name", side.inner, "netns", ns)
			l.ip("link", "set", outer, "master", side.br)
			l.ip("link", "set", outer, "up")
			l.ip("-n", ns, "addr", "add", side.addr+"/24", "dev", side.inner)
			l.ip("-n", ns, "link", "set", side.inner, "up")
		}
		l.cuts = append(l.cuts, l.name(fmt.Sprintf("r%d", i)))
	}
	return l
}

// bridges makes the lab's two bridges on the first free network from
// from on, taking it with the client bridge's address.
func (l *netLab) bridges(from int) {
	l.t.Helper()
	allocating.Lock()
	defer allocating.Unlock() // l.ip may end the goroutine
	l.net = freeNet(from)
	for _, br := range []string{l.name("R"), l.name("C")} {
		l.ip("link", "add", br, "type", "bridge")
		l.ip("link", "set", br, "up")
	}
	l.ip("addr", "add", fmt.Sprintf("10.78.%d.254/24", l.net), "dev", l.name("C"))
}

// freeNet returns the first third byte from b on (mod 250) for which no
// interface of the test's namespace has an address in 10.78.b.0/24:
// another test process (another engineer's) may hold one.
func freeNet(b int) int {
	for k := range 250 {
		n := (b+k-1)%250 + 1
		out, err := exec.Command("ip", "-o", "addr", "show", "to", fmt.Sprintf("10.78.%d.0/24", n)).Output()
		if err == nil && len(strings.TrimSpace(string(out))) == 0 {
			return n
		}
	}
	return b
}

func (l *netLab) name(s string) string { return "slp" + l.id + s }

// RouteIP and ClientIP are node i's addresses on the two networks.
func (l *netLab) RouteIP(i int) string  { return fmt.Sprintf("10.77.%d.%d", l.net, i+1) }
func (l *netLab) ClientIP(i int) string { return fmt.Sprintf("10.78.%d.%d", l.net, i+1) }

// ip runs `ip args...`, failing the test on an error.
func (l *netLab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// Cut takes node i's route link down (up: false) or up again.
func (l *netLab) Cut(i int, cut bool) {
	l.t.Helper()
	state := "up"
	if cut {
		state = "down"
	}
	l.ip("link", "set", l.cuts[i], state)
}

// remove deletes the namespaces, links and bridges, logging (not
// failing on) what is already gone.
func (l *netLab) remove() {
	var names []string
	for i := range l.ns {
		names = append(names, l.name(fmt.Sprintf("r%d", i)), l.name(fmt.Sprintf("c%d", i)))
	}
	for _, link := range append(names, l.name("R"), l.name("C")) {
		_ = exec.Command("ip", "link", "del", link).Run()
	}
	for _, ns := range l.ns {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			l.t.Logf("ip netns del %s: %v %s", ns, err, out)
		}
	}
}

// launchEdgeIn runs `sluice edge args... --ready-file F` in node i's
// namespace (ip netns exec replaces itself with the edge, so the
// process's cleanup kills the edge).
func (l *netLab) launchEdgeIn(i int, args ...string) *process {
	l.t.Helper()
	ready := filepath.Join(l.t.TempDir(), "ready.json")
	all := append([]string{"netns", "exec", l.ns[i], sluiceBinary(l.t), "edge"}, args...)
	p := startCommand(l.t, nil, "ip", append(all, "--ready-file", ready)...)
	p.ready = ready
	return p
}

// nsDialer dials from inside a namespace (the NATS client port of an
// edge's node, which listens on the namespace's loopback alone): a thread
// of the test process enters it for the dial, and the socket stays in the
// namespace it was made in.
type nsDialer struct{ ns string }

// Dial implements nats.CustomDialer.
func (d nsDialer) Dial(network, address string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// Never unlocked: the thread, in the namespace, ends with the
		// goroutine.
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + d.ns)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("enter namespace %s: %w", d.ns, err)}
			return
		}
		c, err := net.DialTimeout(network, address, 5*time.Second)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

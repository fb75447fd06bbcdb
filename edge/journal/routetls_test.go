package journal_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	edgetls "github.com/sluicehq/sluice/edge/tls"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/internal/testcert"
)

// handshakeError is how NATS logs a route refused in its TLS handshake,
// on either side of it.
const handshakeError = "TLS route handshake error"

// TestRouteTLS: nodes with certificates of the cluster's CA form a
// cluster over TLS, alone or with a route token too, whose stream
// replicates: a message published through one node is read through the
// other. A node that is not of the CA never gets a route, whichever side
// verifies it, even with the token. The nodes' certificates are given as
// Certificates, or by the callbacks the edge gives them with (it reloads
// renewed files: edgetls.CertFiles).
func TestRouteTLS(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		callbacks   bool
	}{
		{name: "tls", token: ""},
		{name: "tls and token, certificates by callback", token: "s3cret-shared-by-the-nodes", callbacks: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testRouteTLS(t, tc.token, tc.callbacks)
		})
	}
}

// testRouteTLS is TestRouteTLS on a cluster of the route token given
// ("" for none), which the strangers present too, so that their
// certificates alone keep them out; with callbacks, the nodes present
// their certificates through GetCertificate and GetClientCertificate.
func testRouteTLS(t *testing.T, token string, callbacks bool) {
	ca := testcert.NewCA(t, "cluster CA")
	ports := journaltest.FreePorts(t, 2)
	watch := &logWatch{}
	opts := make([]*journal.NodeOptions, 2)
	for i := range opts {
		log := journaltest.Logger()
		if i == 0 {
			log = slog.New(watch)
		}
		name := "n" + strconv.Itoa(i)
		rt := ca.Config(t, name)
		if callbacks {
			// As the edge configures its routes: the pair from its files,
			// reloaded when they change.
			certFile, keyFile := ca.Issue(t, name)
			files, err := edgetls.LoadCertFiles(certFile, keyFile, nil, log)
			if err != nil {
				t.Fatal(err)
			}
			rt = &tls.Config{RootCAs: ca.Pool, GetCertificate: files.GetCertificate, GetClientCertificate: files.GetClientCertificate}
		}
		opts[i] = tlsNodeOptions(t, name, ports[i], ports, rt, log)
		opts[i].RouteToken = token
	}
	nodes := startNodes(t, opts)
	publishAndReadBack(t, nodes)

	t.Run("no certificate", func(t *testing.T) {
		c := dialRoutePort(t, ports[0])
		// TLS 1.3 lets the client finish its side of the handshake before
		// the node checks the client's certificate: the refusal comes on
		// the first read, instead of the node's INFO.
		tc := tls.Client(c, &tls.Config{RootCAs: ca.Pool, ServerName: "127.0.0.1"})
		buf := make([]byte, 512)
		n, err := tc.Read(buf)
		// crypto/tls reports the peer's alert by its text only.
		if err == nil || !strings.Contains(err.Error(), "tls: certificate required") || strings.Contains(string(buf[:n]), "INFO") {
			t.Fatalf("a route without a certificate read %q, %v; want the node's alert: certificate required", buf[:n], err)
		}
	})

	for _, tc := range []struct {
		name string
		tls  func(t *testing.T) *tls.Config
		// watchStranger: the stranger's log shows the refusal, not n0's;
		// want is in the line that does.
		watchStranger bool
		want          string
	}{
		{
			// It even trusts the cluster's CA (whose certificate is no
			// secret): only the cluster's verification keeps it out.
			name: "certificate of another CA",
			tls: func(t *testing.T) *tls.Config {
				c := testcert.NewCA(t, "another CA").Config(t, "stranger-ca")
				c.RootCAs = c.RootCAs.Clone()
				pem, err := os.ReadFile(ca.CertFile)
				if err != nil || !c.RootCAs.AppendCertsFromPEM(pem) {
					t.Fatalf("the cluster's CA certificate: %v", err)
				}
				// Go's client offers only a certificate of a CA the node
				// asks for; a stranger's offers its own regardless.
				c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &c.Certificates[0], nil }
				return c
			},
			want: "CN=stranger-ca", // the certificate n0 did not verify
		},
		{
			// The node that dials verifies too: the stranger refuses n0's
			// certificate (its log names n0's port, which it dialled).
			name:          "another CA alone",
			tls:           func(t *testing.T) *tls.Config { return testcert.NewCA(t, "another CA").Config(t, "stranger-own") },
			watchStranger: true,
			want:          fmt.Sprintf("127.0.0.1:%d - rid:", ports[0]),
		},
		{
			name: "plain text",
			tls:  func(*testing.T) *tls.Config { return nil },
			want: "first record does not look like a TLS handshake",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port := journaltest.FreePorts(t, 1)[0]
			mine := &logWatch{}
			w := watch
			if tc.watchStranger {
				w = mine
			}
			mark := w.len()
			o := tlsNodeOptions(t, "stranger", port, append([]int{port}, ports...), tc.tls(t), slog.New(mine))
			o.RouteToken = token
			stranger := startNodes(t, []*journal.NodeOptions{o})[0]
			w.await(t, mark, "the stranger's route refused", func(l string) bool {
				return strings.Contains(l, handshakeError) && strings.Contains(l, tc.want)
			})
			if n := stranger.Server().NumRoutes(); n != 0 {
				t.Fatalf("the stranger has %d routes, want none", n)
			}
			for i, node := range nodes {
				rz, err := node.Server().Routez(&server.RoutezOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rz.Routes {
					if r.RemoteName == "stranger" {
						t.Fatalf("n%d routes to the stranger: %+v", i, r)
					}
				}
			}
		})
	}
}

// TestRouteTLSOptions: a route TLS configuration that could not verify
// both ways is refused at the start, with the reason.
func TestRouteTLSOptions(t *testing.T) {
	t.Parallel()
	ca := testcert.NewCA(t, "cluster CA")
	good := ca.Config(t, "n0")
	for _, tc := range []struct {
		name    string
		cluster bool
		tls     *tls.Config
		want    string
	}{
		{name: "no certificate", cluster: true, tls: &tls.Config{RootCAs: ca.Pool}, want: "no certificate"},
		{name: "no CA", cluster: true, tls: &tls.Config{Certificates: good.Certificates}, want: "no cluster CA"},
		{name: "no verification", cluster: true, tls: &tls.Config{Certificates: good.Certificates, RootCAs: ca.Pool, InsecureSkipVerify: true}, want: "InsecureSkipVerify"},
		{name: "per-connection config", cluster: true, want: "GetConfigForClient", tls: &tls.Config{Certificates: good.Certificates, RootCAs: ca.Pool,
			GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
				return &tls.Config{Certificates: good.Certificates}, nil
			}}},
		{name: "not a cluster", tls: good, want: "for a cluster node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := &journal.NodeOptions{DataDir: t.TempDir(), RouteTLS: tc.tls, Logger: journaltest.Logger()}
			if tc.cluster {
				o.ClusterName, o.ClusterListen = "tls", "127.0.0.1:0"
			}
			n, err := journal.StartNode(o)
			if err == nil {
				n.Close()
				t.Fatal("the node started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want one saying %q", err, tc.want)
			}
		})
	}
}

// tlsNodeOptions are the options of the node called name, listening for
// routes on port and routing to every one of ports.
func tlsNodeOptions(t *testing.T, name string, port int, ports []int, tc *tls.Config, log *slog.Logger) *journal.NodeOptions {
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	return &journal.NodeOptions{
		DataDir: t.TempDir(), Name: name, ClusterName: "tls", ClusterListen: fmt.Sprintf("127.0.0.1:%d", port),
		Routes: routes, RouteTLS: tc, Logger: log,
	}
}

// startNodes starts a node of each of opts at once (each waits for the
// others to route to it); they stop when the test ends.
func startNodes(t *testing.T, opts []*journal.NodeOptions) []*journal.Node {
	t.Helper()
	nodes := make([]*journal.Node, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i := range opts {
		wg.Go(func() { nodes[i], errs[i] = journal.StartNode(opts[i]) })
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Cleanup(nodes[i].Close)
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %s: %v", opts[i].Name, err)
		}
	}
	return nodes
}

// publishAndReadBack publishes through nodes[0] to a stream of two
// replicas (acknowledged: the routes are up) and reads the message
// through nodes[1].
func publishAndReadBack(t *testing.T, nodes []*journal.Node) {
	t.Helper()
	const key = "app\x00room"
	j := journaltest.Open(t, nodes[0], &journal.Options{Replicas: 2})
	done := make(chan error, 1)
	j.Publish(key, []byte("hello"), func(_ uint64, err error) { done <- err })
	if err := poll.Recv(t, "the publish's acknowledgment", done); err != nil {
		t.Fatalf("publish on the TLS cluster: %v", err)
	}
	other := journaltest.Open(t, nodes[1], &journal.Options{Replicas: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f, ok, err := other.Last(ctx, key, 0)
	if err != nil || !ok || string(f.Data) != "hello" {
		t.Fatalf("read through the other node: %q, %v, %v; want hello", f.Data, ok, err)
	}
}

// logWatch is a slog.Handler that keeps a node's warnings and errors, for
// a test to wait on one: a refused route shows nowhere else.
type logWatch struct {
	mu    sync.Mutex // guards lines, which Handle appends to
	lines []string
}

// len is how many lines were logged so far.
func (w *logWatch) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

func (w *logWatch) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (w *logWatch) WithAttrs([]slog.Attr) slog.Handler           { return w }
func (w *logWatch) WithGroup(string) slog.Handler                { return w }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, r.Message)
	return nil
}

// await waits until a line that match accepts is logged, after the
// first from lines, and fails t with the lines seen if none comes.
func (w *logWatch) await(t *testing.T, from int, what string, match func(string) bool) {
	t.Helper()
	poll.WithinNil(t, poll.Timeout, what, func() error {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, l := range w.lines[from:] {
			if match(l) {
				return nil
			}
		}
		return fmt.Errorf("logged %q", w.lines[from:])
	})
}

// TestRouteTLSDialsOnlyTheCluster: a node dialling a route checks the
// other end too. Its routes name a listener that presents another CA's
// certificate (as a route name hijacked, or an address learned by
// gossip, would): the node aborts the handshake and never routes there.
func TestRouteTLSDialsOnlyTheCluster(t *testing.T) {
	t.Parallel()
	ca, other := testcert.NewCA(t, "cluster CA"), testcert.NewCA(t, "another CA")
	ports := journaltest.FreePorts(t, 2)
	impostor := other.Config(t, "impostor")
	impostor.ClientAuth = tls.RequestClientCert // to see what the node offers, not to check it
	ln, err := tls.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ports[1]), impostor)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	nodes := startNodes(t, []*journal.NodeOptions{tlsNodeOptions(t, "n0", ports[0], ports, ca.Config(t, "n0"), journaltest.Logger())})

	c, err := ln.Accept()
	if err != nil {
		t.Fatalf("the node did not dial its route: %v", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	// Go's client answers a certificate it cannot verify with the
	// bad-certificate alert (the impostor's names are the node's
	// route's, 127.0.0.1: only its CA is wrong).
	err = c.(*tls.Conn).Handshake()
	if err == nil || !strings.Contains(err.Error(), "tls: bad certificate") {
		t.Fatalf("the impostor's handshake with the node: %v; want the node's alert: bad certificate", err)
	}
	if n := nodes[0].Server().NumRoutes(); n != 0 {
		t.Fatalf("the node has %d routes, want none", n)
	}
}

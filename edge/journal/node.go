package journal

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// NodeOptions configure an embedded NATS server. A nil *NodeOptions is
// not valid: DataDir is required.
type NodeOptions struct {
	// DataDir holds JetStream's files (required): a restart with the same
	// directory keeps every stored message.
	DataDir string
	// Name names the node in its cluster; it must differ between the
	// nodes of one cluster. Default: "sluice-" and the cluster port, or
	// "sluice" alone.
	Name string
	// ClusterName, ClusterListen and Routes make the node one of a
	// JetStream cluster: the cluster's name (the same on every node), the
	// host:port it accepts routes on, and the nats-route:// URLs of the
	// other nodes (listing itself too is fine). Default: a single node.
	ClusterName   string
	ClusterListen string
	Routes        []string
	// RouteToken, when set, is a secret every node of the cluster shares:
	// a node accepts a route only from a node that presents it (and
	// presents it to the others). Without it, anyone who reaches
	// ClusterListen can join the cluster and read every message.
	RouteToken string
	// RouteTLS, when set, encrypts the routes and verifies them both ways
	// (see routetls.go): the node presents its certificate when it dials
	// a route and when it accepts one, and takes a peer only if the
	// peer's certificate chains to RootCAs, the cluster's CA. A peer
	// dialled by name must carry that name among its certificate's SANs,
	// one dialled by IP that IP, unless Routes also name a host: NATS
	// then checks the IP-dialled against the first such name (and a
	// ServerName set here replaces both). RouteToken still applies on top
	// of it. StartNode works on a copy. Default nil: routes in plain text.
	RouteTLS *tls.Config
	// ClientListen, when set, serves NATS clients on host:port, with no
	// authentication (for the nats CLI: keep it on loopback). Default: a
	// random loopback port, locked with a token only the edge knows. The
	// edge itself connects in-process (Node.Connect), not through it.
	ClientListen string
	// Logger receives the server's logs: notices at debug (more with
	// Debug), warnings and errors at their level but for a forming
	// cluster's waits and a down peer's retries (natsLogger); default
	// slog.Default().
	Logger *slog.Logger
	Debug  bool
	// ReadyTimeout bounds how long StartNode waits for the server to
	// accept connections; default 30s.
	ReadyTimeout time.Duration
	// SyncAlways makes JetStream fsync every write before it acknowledges
	// it (in a cluster: every Raft log entry, on each node of the quorum
	// that acknowledges it), so that an acknowledged message survives a
	// power loss. Without it JetStream writes to the page cache, which
	// survives the process's crash (kill -9) but not the machine's, and
	// fsyncs every SyncInterval (default, NATS's: 2 minutes).
	SyncAlways   bool
	SyncInterval time.Duration
}

// routeUser is the user a node presents on its routes, with the token as
// password.
const routeUser = "sluice"

// Node is an embedded NATS server with JetStream.
type Node struct {
	srv   *server.Server
	token string // the client token, if the node made one up
}

// StartNode starts an embedded NATS server with JetStream file storage
// in opts.DataDir and waits until it accepts connections. In a cluster it
// does not wait for the other nodes: JetStream becomes usable once a
// quorum has elected a meta leader (Open retries until then).
func StartNode(opts *NodeOptions) (*Node, error) {
	if opts == nil || opts.DataDir == "" {
		return nil, errors.New("journal: start node: a data directory is required")
	}
	so := &server.Options{
		ServerName: opts.Name,
		JetStream:  true,
		StoreDir:   opts.DataDir,
		// The edge's own connection (and a cluster's routes, which need a
		// client listener) use a random loopback port, locked with a token
		// only the edge knows, unless ClientListen says otherwise.
		Host: "127.0.0.1", Port: server.RANDOM_PORT, Authorization: nuid.Next(),
		NoSigs: true,
		Debug:  opts.Debug,
		// The subjects of a durable edge's traffic rarely repeat within
		// the sublist's cache (1,024 subjects): every publish's
		// acknowledgment goes to a reply subject of its own, and an edge
		// publishes to as many subjects as it has channels. A miss costs
		// more with the cache (a write lock, a copy of the subject, a
		// sweeping goroutine past the limit) than a match costs without.
		NoSublistCache: true,
		// The edge's own limit decides message sizes; keep NATS's above
		// the largest payload an app may set.
		MaxPayload: 8 << 20,
		// NATS's own default interval when it is 0 (setBaselineOptions).
		SyncAlways: opts.SyncAlways, SyncInterval: opts.SyncInterval,
	}
	if opts.SyncInterval < 0 {
		return nil, fmt.Errorf("journal: start node: sync interval %v is negative", opts.SyncInterval)
	}
	if opts.ClientListen != "" {
		host, port, err := splitHostPort(opts.ClientListen)
		if err != nil {
			return nil, fmt.Errorf("journal: client listen %q: %w", opts.ClientListen, err)
		}
		so.Host, so.Port, so.Authorization = host, port, ""
	}
	if err := clusterOptions(so, opts); err != nil {
		return nil, err
	}
	if so.ServerName == "" {
		so.ServerName = "sluice"
	}
	srv, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("journal: start node: %w", err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	nl := newNATSLogger(log)
	srv.SetLoggerV2(nl, opts.Debug, false, false)
	srv.Start()
	if err := serverReady(srv, nl.fatal, opts.ReadyTimeout); err != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("journal: start node: %w", err)
	}
	return &Node{srv: srv, token: so.Authorization}, nil
}

// clusterOptions makes so a cluster node's options when opts name a
// cluster (its name, listen address, routes, their TLS and token), and
// leaves so alone otherwise (refusing route TLS without a cluster).
func clusterOptions(so *server.Options, opts *NodeOptions) error {
	switch {
	case opts.ClusterName == "" && opts.ClusterListen == "" && len(opts.Routes) == 0 && opts.RouteTLS != nil:
		return errors.New("journal: route TLS is for a cluster node: it needs a cluster name and a listen address")
	case opts.ClusterName == "" && opts.ClusterListen == "" && len(opts.Routes) == 0:
		return nil
	case opts.ClusterName == "" || opts.ClusterListen == "":
		return errors.New("journal: a cluster node needs a cluster name and a listen address")
	}
	host, port, err := splitHostPort(opts.ClusterListen)
	if err != nil {
		return fmt.Errorf("journal: cluster listen %q: %w", opts.ClusterListen, err)
	}
	so.Cluster = server.ClusterOpts{Name: opts.ClusterName, Host: host, Port: port}
	if opts.RouteTLS != nil {
		if so.Cluster.TLSConfig, err = routeTLSConfig(opts.RouteTLS); err != nil {
			return err
		}
		so.Cluster.TLSTimeout = routeTLSTimeout.Seconds()
	}
	if opts.RouteToken != "" {
		// NATS checks a route's user and password; the token is the
		// password of a fixed user. Routes found by gossip get them
		// from these options, configured ones from their URL.
		so.Cluster.Username, so.Cluster.Password = routeUser, opts.RouteToken
	}
	for _, r := range opts.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Host == "" {
			return fmt.Errorf("journal: route %q is not a URL (nats-route://host:port)", r)
		}
		if opts.RouteToken != "" && u.User == nil {
			u.User = url.UserPassword(routeUser, opts.RouteToken)
		}
		so.Routes = append(so.Routes, u)
	}
	if so.ServerName == "" {
		so.ServerName = "sluice-" + strconv.Itoa(port)
	}
	return nil
}

// serverReady waits until srv listens, or returns the first fatal error it
// logged: a listen address already in use must say so at once, not as a
// timeout 30 s later. The NATS API has no ready channel, and the error its
// own wait records is not exported, hence the short waits in turn.
func serverReady(srv *server.Server, fatal <-chan string, wait time.Duration) error {
	if wait <= 0 {
		wait = 30 * time.Second
	}
	for end := time.Now().Add(wait); time.Now().Before(end); {
		if srv.ReadyForConnections(50 * time.Millisecond) {
			return nil
		}
		select {
		case msg := <-fatal:
			return errors.New(msg)
		default:
		}
	}
	select {
	case msg := <-fatal:
		return errors.New(msg)
	default:
		return fmt.Errorf("NATS server not ready after %v", wait)
	}
}

// Connect returns a client connection to the node, in-process, which
// reconnects for as long as the node runs (and to a node started again on
// its ClientListen address, over that listener).
func (n *Node) Connect(name string) (*nats.Conn, error) {
	// Only this node: the peers a cluster announces listen on their own
	// random loopback ports, with their own tokens.
	//
	// In-process (net.Pipe), not through the loopback listener: with few
	// publishes in flight, as when each client waits for its publish's
	// answer, every publish and every acknowledgment otherwise costs a
	// write and a read syscall each way and a wake-up through the
	// netpoller, which the pipe's direct hand-over between goroutines
	// saves. BenchmarkPublishPipelined, feed=sole, CPU per publish:
	// 1 in flight 139-142 -> 68-83 µs, 2: 89-93 -> 54-61 µs, 8: 46-56
	// -> 40-42 µs, 128: the same (28-34 µs).
	addr := n.clientAddr()
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectBufSize(-1), nats.IgnoreDiscoveredServers(),
		nats.InProcessServer(inProcess{srv: n.srv, addr: addr})}
	if n.token != "" {
		opts = append(opts, nats.Token(n.token))
	}
	nc, err := nats.Connect("nats://"+addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("journal: connect to the embedded node: %w", err)
	}
	return nc, nil
}

// clientAddr is where the edge would dial its node: the client
// listener's host:port, on loopback when it listens on every address.
func (n *Node) clientAddr() string {
	addr, ok := n.srv.Addr().(*net.TCPAddr)
	if !ok {
		return strings.TrimPrefix(n.srv.ClientURL(), "nats://")
	}
	ip := addr.IP
	if ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1)
		if addr.IP.To4() == nil {
			ip = net.IPv6loopback
		}
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(addr.Port))
}

// inProcess gives nats.go its connections to the node: a pipe into the
// server while it runs, else (a node shut down, and perhaps another
// started on its files and port, as an outage is simulated) the client
// listener at addr, so that the connection comes back as it would over
// loopback.
type inProcess struct {
	srv  *server.Server
	addr string
}

// inProcessDialTimeout bounds the dial of the fallback, as nats.go's own
// default Timeout does a dial's.
const inProcessDialTimeout = 2 * time.Second

func (p inProcess) InProcessConn() (net.Conn, error) {
	if c, err := p.srv.InProcessConn(); err == nil {
		return c, nil
	}
	c, err := net.DialTimeout("tcp", p.addr, inProcessDialTimeout)
	if err != nil {
		return nil, fmt.Errorf("journal: dial the node at %s: %w", p.addr, err)
	}
	return c, nil
}

// Server returns the NATS server, for tests and metrics.
func (n *Node) Server() *server.Server { return n.srv }

// Close shuts the node down (a stream leader steps down first) and waits
// for it. Idempotent.
func (n *Node) Close() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not a number from 0 to 65535", p)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

package edgecmd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/store"
)

// ClusterConfig makes the edge durable, and one of a cluster of edges, on
// NATS JetStream. Default: none of it, the store in memory alone.
type ClusterConfig struct {
	// DataDir turns on the embedded NATS server, with JetStream's files in
	// this directory: history, positions and latest values survive a
	// restart (even kill -9). Default "": in memory only. The --data-dir
	// flag overrides it.
	DataDir string `yaml:"data_dir,omitempty"`
	// Name, Listen and Routes make the embedded node one of a JetStream
	// cluster: the cluster's name (the same on every edge), the host:port
	// this node accepts routes on, and the other nodes' route URLs
	// (nats-route://host:port; listing this node too is fine). Three
	// edges make a three-node cluster whose stream is replicated 3x.
	// Default: a single node.
	Name   string   `yaml:"name,omitempty"`
	Listen string   `yaml:"listen,omitempty"`
	Routes []string `yaml:"routes,omitempty"`
	// NodeName names this node in the cluster (unique per edge). Default
	// "sluice-" and the cluster port.
	NodeName string `yaml:"node_name,omitempty"`
	// TLS encrypts the routes and verifies them both ways with the
	// cluster's CA (see ClusterTLSConfig, in config_cluster_tls.go).
	// Default none: routes in plain text.
	TLS ClusterTLSConfig `yaml:"tls,omitempty"`
	// Token is a secret of at least 16 bytes that every node of the
	// cluster shares: a node accepts routes only from nodes that present
	// it. Required when Listen is not on loopback and TLS is not set
	// (anyone who reaches an open route port could join the cluster and
	// read every message); with TLS, whose verification of both ends
	// already keeps out a node without a certificate of the cluster's CA,
	// it is a second lock.
	// TokenFile holds it instead (its first line), and the environment
	// variable SLUICE_CLUSTER_TOKEN when neither is set. Default none.
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"token_file,omitempty"`
	// ClientListen also serves NATS clients from the embedded node on
	// host:port (for the nats CLI), with no authentication: loopback
	// only. Default none.
	ClientListen string `yaml:"client_listen,omitempty"`
	// Replicas of the stream when the edge creates it. Default 3 in a
	// cluster, 1 alone or with an external NATS (set it there).
	Replicas int `yaml:"replicas,omitempty"`
	// Stream names the JetStream stream. Default SLUICE.
	Stream string `yaml:"stream,omitempty"`
	// Partitions is how many streams the log is split into, each its own
	// Raft group with its own leader (so more than one node takes
	// writes); a channel's partition is fixed by its name. Default 1:
	// the stream Stream; with more, Stream-0 ... Stream-(K-1). A log
	// keeps the count it was made with (docs/cluster.md, "Partitions").
	Partitions int `yaml:"partitions,omitempty"`
	// MaxBytes bounds the stream on disk; the oldest messages go first.
	// Default 0: bounded by age alone (the longest retention of the
	// apps' rules).
	MaxBytes Size `yaml:"max_bytes,omitempty"`
	// PublishTimeout is the one deadline of every request that waits for
	// the stream (a publish, a conditional write, a purge), its reads of
	// the leader and its retries included (past a leader election); then
	// it fails with "unavailable", saying whether the message may have
	// been stored (README: Order and fate of publishes). Default 20s.
	PublishTimeout Duration `yaml:"publish_timeout,omitempty"`
	// Duplicates is the stream's window for recognising a publish sent
	// again with the same Msg-Id: an edge's retry after no answer, or a
	// server API request retried with its idempotency_key on another
	// edge. JetStream holds about 180 bytes of heap per publish in it (54
	// MB at 10,000 publishes a second for 30 s). Default
	// journal.DefaultDuplicates, or SoleDuplicates on a single durable
	// node. A stream keeps the longest window any of its edges asked for,
	// but a single durable node's, its only writer's, is its own.
	Duplicates Duration `yaml:"duplicates,omitempty"`
	// Sync is when the embedded node fsyncs JetStream's files (see
	// SyncPolicy): "always", or an interval. It is the embedded node's
	// only: with nats.urls the NATS servers' own sync_interval applies.
	Sync SyncPolicy `yaml:"sync,omitempty"`
	// Feed is what each edge receives of the stream: "interest", the
	// channels its clients use, through the stream's republished
	// messages; or "all", every message through one ordered consumer
	// (docs/cluster.md). Default interest where edges share the log (a
	// cluster, nats.urls, client_listen), all on a single durable node,
	// which appends its own publishes as its stream's sole writer.
	Feed string `yaml:"feed,omitempty"`
}

// interest reports whether the edge is fed by interest: so configured,
// or by default where other edges may write to the log (soleWriter
// false).
func (cl *ClusterConfig) interest(soleWriter bool) bool {
	return cl.Feed == FeedInterest || cl.Feed == "" && !soleWriter
}

// MaxPartitions bounds cluster.partitions: each partition is a Raft
// group of every node and a feed of every edge.
const MaxPartitions = 64

// Feeds of ClusterConfig.Feed.
const (
	FeedAll      = "all"
	FeedInterest = "interest"
)

// NATSConfig points the edge at an external NATS cluster instead of an
// embedded node (production: edges and NATS scaled apart).
type NATSConfig struct {
	// URLs of the NATS servers (nats:// or tls://). Default none.
	URLs []string `yaml:"urls,omitempty"`
	// CredsFile is a NATS credentials file (JWT and NKey seed).
	CredsFile string `yaml:"creds_file,omitempty"`
	// Token, or User and Password, authenticate otherwise.
	Token    string `yaml:"token,omitempty"`
	User     string `yaml:"user,omitempty"`
	Password string `yaml:"password,omitempty"`
	// CAFile, CertFile and KeyFile configure TLS to NATS: the roots
	// trusted, and a client certificate.
	CAFile   string `yaml:"ca_file,omitempty"`
	CertFile string `yaml:"cert_file,omitempty"`
	KeyFile  string `yaml:"key_file,omitempty"`
}

// durable reports whether the edge keeps its channels in JetStream.
func (c *Config) durable() bool { return c.Cluster.DataDir != "" || len(c.NATS.URLs) > 0 }

// DurableStoreBytes is limits.store_bytes's default on a durable edge.
// The log keeps every message there, so the store is a cache of the
// newest ones: a read, a history or a subscriber older than it reads the
// log (chanlog.Journaled; delivery's resume), and channels are counted
// and listed in the log. It need not hold every channel's ttl as an
// edge in memory must: 32 MiB holds 70 s (the longest ttl and grace of
// the demo app) of 2,500 publishes a second of 128 bytes, and the newest
// 10 s of 20,000 a second, where 1 GiB, the default in memory, grew to
// a third of a durable edge's 800 MB of RSS at that rate.
const DurableStoreBytes = 32 << 20

// storeBytes is the store's bound: limits.store_bytes, else its default.
func (c *Config) storeBytes() int64 {
	switch {
	case c.Limits.StoreBytes > 0:
		return int64(c.Limits.StoreBytes)
	case c.durable():
		return DurableStoreBytes
	}
	return store.DefaultStoreBytes
}

// clustered reports whether the embedded node joins a cluster.
func (c *ClusterConfig) clustered() bool {
	return c.Name != "" || c.Listen != "" || len(c.Routes) > 0
}

// minRouteToken is the shortest route token taken: a secret, not a name.
const minRouteToken = 16

// routeToken returns the cluster's route token: Token, TokenFile's first
// line, or SLUICE_CLUSTER_TOKEN; "" if none is set.
func (c *ClusterConfig) routeToken() (string, error) {
	token := c.Token
	switch {
	case c.Token != "" && c.TokenFile != "":
		return "", errors.New("cluster: set token or token_file, not both")
	case c.TokenFile != "":
		b, err := os.ReadFile(c.TokenFile)
		if err != nil {
			return "", fmt.Errorf("cluster.token_file: %w", err)
		}
		token, _, _ = strings.Cut(string(b), "\n")
		token = strings.TrimSpace(token)
		if token == "" {
			return "", fmt.Errorf("cluster.token_file %s: empty", c.TokenFile)
		}
	case token == "":
		token = os.Getenv("SLUICE_CLUSTER_TOKEN")
	}
	if token != "" && len(token) < minRouteToken {
		return "", fmt.Errorf("cluster.token: %d bytes is too short for a secret (at least %d)", len(token), minRouteToken)
	}
	return token, nil
}

// onLoopback reports whether host:port listens on loopback only.
func onLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validateCluster checks the cluster and nats sections.
func (c *Config) validateCluster() error {
	cl, n := &c.Cluster, &c.NATS
	if len(n.URLs) > 0 && (cl.DataDir != "" || cl.clustered()) {
		return errors.New("nats.urls and cluster.data_dir (or the cluster keys) are exclusive: use an external NATS or an embedded one")
	}
	if cl.TLS.set() && len(c.NATS.URLs) > 0 {
		return errors.New("cluster.tls is for the routes of an embedded cluster; TLS to nats.urls is nats.ca_file, cert_file and key_file")
	}
	if cl.TLS.set() && !cl.clustered() {
		return errors.New("cluster.tls: route TLS is for a cluster node: set cluster.name and listen (and routes) too")
	}
	if cl.clustered() {
		if cl.DataDir == "" {
			return errors.New("cluster: a cluster node needs data_dir (--data-dir)")
		}
		if cl.Name == "" || cl.Listen == "" {
			return errors.New("cluster: name and listen are both required for a cluster node")
		}
		token, err := cl.routeToken()
		if err != nil {
			return err
		}
		if err := cl.TLS.check(); err != nil {
			return err
		}
		if token == "" && !cl.TLS.set() && !onLoopback(cl.Listen) {
			return fmt.Errorf("cluster.listen %s takes routes from other hosts, and anyone who reaches it could join the cluster and read every message: set cluster.tls (a certificate of the cluster's CA on every node) or cluster.token (or token_file, or SLUICE_CLUSTER_TOKEN, the same secret on every node)", cl.Listen)
		}
	}
	if cl.ClientListen != "" && !onLoopback(cl.ClientListen) {
		return fmt.Errorf("cluster.client_listen %s: the embedded node serves NATS clients with no authentication, so only on loopback (127.0.0.1:PORT)", cl.ClientListen)
	}
	if err := cl.checkWindows(c.soleWriter()); err != nil {
		return err
	}
	if err := cl.checkSync(len(n.URLs) > 0); err != nil {
		return err
	}
	if cl.Feed != "" && cl.Feed != FeedAll && cl.Feed != FeedInterest {
		return fmt.Errorf("cluster.feed: %q is not %q or %q", cl.Feed, FeedAll, FeedInterest)
	}
	if cl.MaxBytes < 0 {
		return fmt.Errorf("cluster.max_bytes: %d is negative", cl.MaxBytes)
	}
	if (n.CertFile == "") != (n.KeyFile == "") {
		return errors.New("nats: cert_file and key_file go together")
	}
	if c.durable() {
		if err := c.checkReplicaFits(); err != nil {
			return err
		}
	}
	if cl.Partitions < 0 || cl.Partitions > MaxPartitions {
		return fmt.Errorf("cluster.partitions: %d is not from 1 to %d", cl.Partitions, MaxPartitions)
	}
	if cl.Replicas < 0 || cl.Replicas > 5 {
		return fmt.Errorf("cluster.replicas: %d is not from 1 to 5", cl.Replicas)
	}
	if cl.Stream != "" && strings.ContainsAny(cl.Stream, ".*> \t") {
		return fmt.Errorf("cluster.stream: %q may not hold '.', '*', '>' or spaces", cl.Stream)
	}
	if n.Token != "" && (n.User != "" || n.CredsFile != "") || n.User != "" && n.CredsFile != "" {
		return errors.New("nats: token, user/password and creds_file are exclusive")
	}
	return nil
}

// checkReplicaFits refuses limits under which the log would store a
// message the edge's store cannot hold: the log acknowledges it, and the
// replica would then skip it. A stored message holds up to one encoding
// per codec (three) and a small header.
func (c *Config) checkReplicaFits() error {
	channel := int64(c.Limits.ChannelBytes)
	if channel <= 0 {
		channel = store.DefaultChannelBytes
	}
	mem := min(channel, c.storeBytes())
	for i, a := range c.Apps {
		msg := int64(a.MaxMessageBytes)
		if msg <= 0 {
			msg = 64 << 10
		}
		if need := 3*msg + 64; need > mem {
			return fmt.Errorf("apps[%d].max_message_bytes: %d needs limits.channel_bytes and store_bytes of at least %d on a durable edge (the log would take messages the memory cannot)", i, msg, need)
		}
	}
	return nil
}

// checkWindows refuses a publish_timeout that would let an edge send a
// publish again after the log forgot its Msg-Id, which could store it
// twice: the journal keeps its retries within 3/4 of the window.
func (cl *ClusterConfig) checkWindows(sole bool) error {
	dup, least := cl.duplicates(sole), minDuplicates
	if sole {
		least = minSoleDuplicates
	}
	if dup < least {
		return fmt.Errorf("cluster.duplicates: %v is under %v: the log would forget a publish before an edge stops sending it again", dup, least)
	}
	if t := time.Duration(cl.PublishTimeout); t < 0 || t > dup*3/4 {
		return fmt.Errorf("cluster.publish_timeout: %v must be positive and at most 3/4 of cluster.duplicates (%v), the log's window for recognising a retry", t, dup)
	}
	return nil
}

// minDuplicates is the least cluster.duplicates: 4/3 of a publish_timeout
// of 15 s (a leader election with time to spare).
const minDuplicates = 20 * time.Second

// SoleDuplicates is cluster.duplicates's default on a single durable
// node (no cluster, no client listener): its edge is the stream's only
// writer, on an in-process connection, with no leader election for a
// publish to outlast, so the window need only cover the edge's own
// retries (SolePublishTimeout) and a client's retry of a request
// answered "may have been stored" (the rest of the window), and the
// edge remembers the server API's idempotency keys that succeeded
// itself, for 5 minutes. JetStream holds about 180
// bytes of heap per publish for the window: at 18,000 publishes a second
// the 30 s of a cluster held 96 MB of a durable edge's heap, doubled in
// RSS by the collector's headroom.
const SoleDuplicates = 10 * time.Second

// minSoleDuplicates is the least cluster.duplicates of a single durable
// node: a publish_timeout of 3 s, an AckWait and a retry.
const minSoleDuplicates = 4 * time.Second

// duplicates is the stream's duplicates window: cluster.duplicates, else
// its default for a sole writer or for a log shared by edges.
func (cl *ClusterConfig) duplicates(sole bool) time.Duration {
	switch {
	case cl.Duplicates > 0:
		return time.Duration(cl.Duplicates)
	case sole:
		return SoleDuplicates
	}
	return journal.DefaultDuplicates
}

// SolePublishTimeout is cluster.publish_timeout's default on a single
// durable node: no election to outlast, and half of SoleDuplicates, so
// that a server API request answered "may have been stored" may be sent
// again with its idempotency_key for at least 5 s after the answer and
// be stored once.
const SolePublishTimeout = 5 * time.Second

// publishTimeout is cluster.publish_timeout, else SolePublishTimeout on a
// single durable node, else 0: the journal's default, at most 3/4 of the
// duplicates window.
func (cl *ClusterConfig) publishTimeout(sole bool) time.Duration {
	if cl.PublishTimeout == 0 && sole && cl.Duplicates == 0 {
		return SolePublishTimeout
	}
	return time.Duration(cl.PublishTimeout)
}

// soleWriter reports whether the edge is a single durable node whose
// embedded NATS only it can reach (a random, token-locked loopback
// port): the stream's only writer.
func (c *Config) soleWriter() bool {
	cl := &c.Cluster
	return cl.DataDir != "" && len(c.NATS.URLs) == 0 && !cl.clustered() && cl.ClientListen == ""
}

// resolveCluster makes the section's relative paths relative to dir.
func (c *Config) resolveCluster(dir string) {
	cl, n, t := &c.Cluster, &c.NATS, &c.Cluster.TLS
	resolvePaths(dir, &cl.DataDir, &cl.TokenFile, &n.CredsFile, &n.CAFile, &n.CertFile, &n.KeyFile, &t.CertFile, &t.KeyFile, &t.CAFile)
}

// logRetention returns how long the stream must keep messages (the
// longest any app's rule keeps one) and how far back a restarted edge
// replays it into memory (the longest TTL plus grace).
func logRetention(apps []*app.App) (maxAge, replay time.Duration) {
	rules := []store.Retention{store.Retention{}.Normalized()}
	for _, a := range apps {
		for _, r := range a.Channels {
			rules = append(rules, r.Retention.Normalized())
		}
	}
	for _, r := range rules {
		replay = max(replay, r.TTL+r.Grace)
		maxAge = max(maxAge, r.TTL+r.Grace)
		if r.HistoryCount > 0 {
			maxAge = max(maxAge, r.HistoryAge)
		}
	}
	return maxAge, replay
}

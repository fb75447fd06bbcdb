package main

// The edge's flags for TLS, the admin listener, durability and clusters:
// those given are written over the configuration file's values
// (edgeConfig).

import (
	"flag"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd"
)

// opsFlags are the edge's TLS and admin flags; those given override the
// configuration file.
type opsFlags struct {
	domains                                       []string
	email, acmeCA, acmeCARoot, cert, key, certDir string
	httpListen, adminListen                       string
}

// register defines the flags on fs.
func (o *opsFlags) register(fs *flag.FlagSet) {
	fs.Func("domain", "public name to obtain a TLS certificate for through ACME (repeatable); turns on HTTPS/WSS on :443", func(v string) error {
		o.domains = append(o.domains, v)
		return nil
	})
	fs.StringVar(&o.email, "email", "", "ACME account contact, for the CA's expiry warnings")
	fs.StringVar(&o.acmeCA, "acme-ca", "", "ACME directory URL (default Let's Encrypt production)")
	fs.StringVar(&o.acmeCARoot, "acme-ca-root", "", "PEM file of the roots trusted for the ACME CA's HTTPS endpoint (a private CA)")
	fs.StringVar(&o.cert, "tls-cert", "", "PEM certificate chain to serve instead of ACME (with --tls-key)")
	fs.StringVar(&o.key, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&o.certDir, "cert-dir", "", "where ACME accounts and certificates are stored (default ~/.local/share/sluice/certs)")
	fs.StringVar(&o.httpListen, "http-listen", "", `HTTP address for ACME http-01 and redirects to HTTPS, or "off" (default :80 with TLS)`)
	fs.StringVar(&o.adminListen, "admin-listen", "", "address of the admin listener: /metrics, /healthz, /readyz, /debug/pprof/, the server API and the admin page at /admin/ (default none)")
}

// apply writes the flags given over the configuration.
func (o *opsFlags) apply(c *edgecmd.Config) {
	if len(o.domains) > 0 {
		c.TLS.Domains = slices.Clone(o.domains)
	}
	override([]flagValue{
		{o.email, &c.TLS.Email}, {o.acmeCA, &c.TLS.ACMECA}, {o.acmeCARoot, &c.TLS.ACMECARoot},
		{o.cert, &c.TLS.CertFile}, {o.key, &c.TLS.KeyFile}, {o.certDir, &c.TLS.CertDir},
		{o.httpListen, &c.TLS.HTTPListen}, {o.adminListen, &c.Admin.Listen},
	})
}

// flagValue pairs a string flag's value with the configuration field it
// overrides.
type flagValue struct {
	flag string
	dst  *string
}

// override writes each flag given (not empty) over its field.
func override(fs []flagValue) {
	for _, f := range fs {
		if f.flag != "" {
			*f.dst = f.flag
		}
	}
}

// clusterFlags are the edge's durability and cluster flags.
type clusterFlags struct {
	dataDir, name, listen, nodeName, feed        string
	tlsCert, tlsKey, tlsCA                       string
	natsCreds, natsToken, natsUser, natsPassword string
	natsCA, natsCert, natsKey                    string
	routes, nats                                 []string
	partitions                                   int
}

func (o *clusterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&o.dataDir, "data-dir", "", "keep channels durable in an embedded NATS JetStream in this directory (default: in memory)")
	fs.StringVar(&o.name, "cluster-name", "", "join a JetStream cluster of this name (with --cluster-listen and --cluster-routes)")
	fs.StringVar(&o.listen, "cluster-listen", "", "host:port this node accepts cluster routes on")
	fs.Func("cluster-routes", "comma-separated route URLs of the other nodes (nats-route://host:port)", func(v string) error {
		o.routes = append(o.routes, splitList(v)...)
		return nil
	})
	fs.StringVar(&o.nodeName, "node-name", "", "this node's name in the cluster (default sluice-PORT)")
	fs.StringVar(&o.feed, "cluster-feed", "", "what this edge receives of the log: interest, the channels its clients use, or all (default: interest where edges share the log, all on a single durable node)")
	fs.IntVar(&o.partitions, "cluster-partitions", 0, "how many streams the log is split into, each with its own leader (default 1; fixed when the log is made)")
	fs.StringVar(&o.tlsCert, "cluster-tls-cert", "", "PEM certificate chain this node presents on its routes (with --cluster-tls-key and --cluster-tls-ca): routes over TLS, verified both ways")
	fs.StringVar(&o.tlsKey, "cluster-tls-key", "", "PEM private key of --cluster-tls-cert")
	fs.StringVar(&o.tlsCA, "cluster-tls-ca", "", "PEM certificate of the cluster's CA, which every node's route certificate must chain to")
	fs.Func("nats", "comma-separated URLs of an external NATS cluster to use instead of an embedded one", func(v string) error {
		o.nats = append(o.nats, splitList(v)...)
		return nil
	})
	fs.StringVar(&o.natsCreds, "nats-creds", "", "NATS credentials file for --nats")
	fs.StringVar(&o.natsToken, "nats-token", "", "NATS token for --nats")
	fs.StringVar(&o.natsUser, "nats-user", "", "NATS user for --nats (with --nats-password)")
	fs.StringVar(&o.natsPassword, "nats-password", "", "NATS password for --nats-user")
	fs.StringVar(&o.natsCA, "nats-ca", "", "PEM roots trusted for TLS to --nats")
	fs.StringVar(&o.natsCert, "nats-cert", "", "PEM client certificate for TLS to --nats (with --nats-key)")
	fs.StringVar(&o.natsKey, "nats-key", "", "PEM private key of --nats-cert")
}

func (o *clusterFlags) apply(c *edgecmd.Config) {
	override([]flagValue{
		{o.dataDir, &c.Cluster.DataDir}, {o.name, &c.Cluster.Name}, {o.listen, &c.Cluster.Listen},
		{o.nodeName, &c.Cluster.NodeName}, {o.tlsCert, &c.Cluster.TLS.CertFile}, {o.tlsKey, &c.Cluster.TLS.KeyFile},
		{o.tlsCA, &c.Cluster.TLS.CAFile}, {o.natsCreds, &c.NATS.CredsFile}, {o.natsToken, &c.NATS.Token},
		{o.natsUser, &c.NATS.User}, {o.natsPassword, &c.NATS.Password}, {o.natsCA, &c.NATS.CAFile},
		{o.natsCert, &c.NATS.CertFile}, {o.natsKey, &c.NATS.KeyFile}, {o.feed, &c.Cluster.Feed},
	})
	if len(o.routes) > 0 {
		c.Cluster.Routes = o.routes
	}
	if o.partitions != 0 {
		c.Cluster.Partitions = o.partitions
	}
	if len(o.nats) > 0 {
		c.NATS.URLs = o.nats
	}
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

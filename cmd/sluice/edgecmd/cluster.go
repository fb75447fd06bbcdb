package edgecmd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/presence"
	"github.com/sluicehq/sluice/edge/presencekv"
	"github.com/sluicehq/sluice/edge/server"
)

// durability is what keeps a durable edge's channels: the embedded NATS
// node (or none, with an external NATS), the connection and the journal.
type durability struct {
	node *journal.Node // nil with an external NATS
	nc   *nats.Conn
	js   []*journal.Journal // one per partition, in order
	pres *presencekv.Sync   // presence over every edge of the cluster
	desc string             // for the banner
}

// startDurability starts the embedded node (or connects to the external
// NATS) and opens the stream; it waits for JetStream (a new cluster first
// elects its leader) until ctx ends.
//
// lost is called if the stream is deleted under the running edge (see
// journal.ErrStreamLost): the edge must stop.
func startDurability(ctx context.Context, cfg *Config, apps []*app.App, reg *presence.Registry, ack journal.Observer, lost func(error), log *slog.Logger) (*durability, error) {
	d := &durability{}
	replicas, err := d.connect(cfg, log)
	if err != nil {
		d.close()
		return nil, err
	}
	cl := &cfg.Cluster
	warnPayload(apps, d.nc.MaxPayload(), log)
	maxAge, replay := logRetention(apps)
	// A durable single node whose NATS only this edge can reach (a
	// random, token-locked loopback port) has no other writer: the edge
	// appends its own acknowledged publishes (journal.Options).
	sole := cfg.soleWriter()
	opts := journal.Options{
		Stream: cl.Stream, Replicas: replicas, MaxAge: maxAge, MaxBytes: int64(cl.MaxBytes),
		PublishTimeout: cl.publishTimeout(sole), Duplicates: cl.duplicates(sole), Replay: replay, Logger: log, AckLatency: ack,
		OnLost:     lost,
		SoleWriter: sole,
		Interest:   cl.interest(sole),
		Partitions: max(cl.Partitions, 1),
	}
	for p := 0; p < opts.Partitions && err == nil; p++ {
		opts.Partition = p
		var j *journal.Journal
		if j, err = journal.Open(ctx, d.nc, &opts); err == nil {
			d.js = append(d.js, j)
		}
	}
	if err == nil {
		// Presence in a bucket beside the stream, replicated like it: a
		// channel's members are those of every edge.
		d.pres, err = presencekv.Start(ctx, d.nc, reg, &presencekv.Options{Replicas: replicas, Logger: log})
	}
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

// streams describes the log's streams for the banner.
func (d *durability) streams() string {
	if len(d.js) == 1 {
		return fmt.Sprintf("JetStream stream %s, epoch %d", d.js[0].Stream(), d.js[0].Epoch())
	}
	return fmt.Sprintf("%d partitions, JetStream streams %s to %s", len(d.js), d.js[0].Stream(), d.js[len(d.js)-1].Stream())
}

// connect connects d to the external NATS, or starts the embedded node
// and connects to it, and returns the replicas of the stream (and the
// presence bucket) to create: cluster.replicas, or 3 on an embedded
// cluster, else 1. On an error, d holds what it started.
func (d *durability) connect(cfg *Config, log *slog.Logger) (replicas int, err error) {
	cl := &cfg.Cluster
	replicas = cl.Replicas
	if len(cfg.NATS.URLs) > 0 {
		d.desc = "external NATS " + strings.Join(cfg.NATS.URLs, ",") + ", fsync as the NATS servers' sync_interval says"
		if replicas == 0 {
			log.Warn("the stream is created with 1 replica on an external NATS; set cluster.replicas (3) for one that survives a NATS server's loss")
		}
		d.nc, err = connectNATS(&cfg.NATS)
		return replicas, err
	}
	no, err := cl.nodeOptions(log)
	if err != nil {
		return 0, err
	}
	d.desc = "durable in " + cl.DataDir
	if cl.clustered() {
		d.desc += fmt.Sprintf(", cluster %s (node on %s)", cl.Name, cl.Listen)
		if no.RouteTLS != nil {
			d.desc += ", routes over TLS"
		}
		if replicas == 0 {
			replicas = 3
		}
	}
	d.desc += syncDesc(cl.Sync.orDefault())
	if d.node, err = journal.StartNode(no); err != nil {
		return 0, err
	}
	d.nc, err = d.node.Connect("sluice-edge")
	return replicas, err
}

// warnPayload warns of the apps whose largest messages the NATS server
// would refuse (its max_payload, max): a stored message holds up to one
// encoding per codec (three) and a few headers, and a publish that arms
// a dead man's switch also its ttl_message, as large again, in base64.
// Such publishes are refused (message_too_large) while the rest work, so
// the edge starts; the embedded node allows 8 MiB, an external NATS 1 MiB
// unless its max_payload says otherwise.
func warnPayload(apps []*app.App, max int64, log *slog.Logger) {
	for _, a := range apps {
		msg := int64(a.MaxMessageBytes)
		plain := 3*msg + 4<<10
		switch arming := plain + 4*(3*msg)/3 + 4; {
		case plain > max:
			log.Warn("NATS refuses this app's largest messages: lower max_message_bytes or raise the NATS server's max_payload",
				"app", a.Key, "max_message_bytes", msg, "needs_max_payload", arming, "max_payload", max)
		case arming > max:
			log.Warn("NATS refuses this app's largest publishes with ttl and ttl_message: lower max_message_bytes or raise the NATS server's max_payload",
				"app", a.Key, "max_message_bytes", msg, "needs_max_payload", arming, "max_payload", max)
		}
	}
}

// nodeOptions returns the embedded node's options: the cluster section,
// with its route token and route TLS files loaded.
func (cl *ClusterConfig) nodeOptions(log *slog.Logger) (*journal.NodeOptions, error) {
	token, err := cl.routeToken()
	if err != nil {
		return nil, err
	}
	routeTLS, err := cl.TLS.config(log)
	if err != nil {
		return nil, err
	}
	sync := cl.Sync.orDefault()
	return &journal.NodeOptions{
		DataDir: cl.DataDir, Name: cl.NodeName, ClusterName: cl.Name, ClusterListen: cl.Listen,
		Routes: cl.Routes, RouteToken: token, RouteTLS: routeTLS, ClientListen: cl.ClientListen, Logger: log,
		SyncAlways: sync.Always, SyncInterval: sync.Interval,
	}, nil
}

// awaitReplay starts the feed into the server's store and waits until it
// has caught up with the stream, so that clients are served from a store
// as recent as the log (a live subscription must not get what was
// published before it, nor a read a stale latest value).
func (d *durability) awaitReplay(ctx context.Context, srv *server.Server, log *slog.Logger) error {
	start := time.Now()
	for _, j := range d.js {
		if err := j.Start(ctx, srv.Store()); err != nil {
			return err
		}
	}
	for p, j := range d.js {
		select {
		case <-j.CaughtUp():
		case <-ctx.Done():
			return ctx.Err()
		}
		log.Info("journal replayed into memory", "stream", j.Stream(), "took", time.Since(start).Round(time.Millisecond).String(),
			"applied", srv.Store().Applied(p))
	}
	return nil
}

// connectNATS connects to an external NATS cluster, reconnecting for as
// long as the edge runs.
func connectNATS(c *NATSConfig) (*nats.Conn, error) {
	// No reconnect buffer: a publish sent while NATS is away fails and is
	// retried by the journal, so one that failed its client is not stored
	// later from a buffer.
	opts := []nats.Option{nats.Name("sluice-edge"), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second),
		nats.ReconnectBufSize(-1)}
	switch {
	case c.CredsFile != "":
		opts = append(opts, nats.UserCredentials(c.CredsFile))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	case c.User != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	}
	if c.CAFile != "" {
		opts = append(opts, nats.RootCAs(c.CAFile))
	}
	if c.CertFile != "" {
		opts = append(opts, nats.ClientCert(c.CertFile, c.KeyFile))
	}
	nc, err := nats.Connect(strings.Join(c.URLs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", strings.Join(c.URLs, ","), err)
	}
	return nc, nil
}

// close stops presence (its members leave the other edges at once) and
// the journal, then the connection and the node.
func (d *durability) close() {
	if d == nil {
		return // not a durable edge
	}
	if d.pres != nil {
		d.pres.Close()
	}
	for _, j := range d.js {
		j.Close()
	}
	if d.nc != nil {
		d.nc.Close()
	}
	if d.node != nil {
		d.node.Close()
	}
}

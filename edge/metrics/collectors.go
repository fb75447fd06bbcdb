package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
	edgetls "github.com/sluicehq/sluice/edge/tls"
)

// metric describes one exported value: its descriptor and its type.
type metric struct {
	name string
	desc *prometheus.Desc
	kind prometheus.ValueType
}

func newMetric(subsystem, name, help string, kind prometheus.ValueType, labels ...string) metric {
	fq := prometheus.BuildFQName("sluice", subsystem, name)
	return metric{name: fq, desc: prometheus.NewDesc(fq, help, labels, nil), kind: kind}
}

// The server's and the store's metrics.
var (
	connections      = newMetric("server", "connections", "Open WebSocket connections.", prometheus.GaugeValue)
	connectionsTotal = newMetric("server", "connections_total", "WebSocket connections accepted.", prometheus.CounterValue)
	httpStreams      = newMetric("server", "http_streams", "Open connections carried over HTTP (Server-Sent Events, NDJSON, one-shot publishes), counted in connections too.", prometheus.GaugeValue)
	httpStreamsTotal = newMetric("server", "http_streams_total", "Connections carried over HTTP opened.", prometheus.CounterValue)
	codecConns       = newMetric("server", "codec_connections", "Open WebSocket connections by codec; a message is stored in msgpack and in the codecs with connections when it is published, or closed less than a minute before.", prometheus.GaugeValue, "codec")
	subscriptions    = newMetric("server", "subscriptions", "Live subscriptions.", prometheus.GaugeValue)
	published        = newMetric("server", "published_messages_total", "Messages published by clients (publish, write, delete), by the codec they came in.", prometheus.CounterValue, "codec")
	delivered        = newMetric("server", "delivered_messages_total", "Messages delivered in subscription data, by the subscriber's codec.", prometheus.CounterValue, "codec")
	received         = newMetric("server", "received_bytes_total", "Bytes of WebSocket frames read from clients, by codec.", prometheus.CounterValue, "codec")
	sent             = newMetric("server", "sent_bytes_total", "Bytes of WebSocket frames written to clients, by codec.", prometheus.CounterValue, "codec")
	outOfSync        = newMetric("server", "out_of_sync_total", "Subscriptions ended with out_of_sync: they fell behind and their messages expired.", prometheus.CounterValue)
	fastForwards     = newMetric("server", "fast_forwards_total", "Subscriptions that fell behind and skipped to the oldest stored message (fast_forward).", prometheus.CounterValue)
	logResumes       = newMetric("server", "log_resumes_total", "Subscriptions that fell behind the store (a durable edge's store is a cache of the log) and read on from the log, missing nothing.", prometheus.CounterValue)
	logRetries       = newMetric("server", "log_retries_total", "Log reads for a channel of a prefix subscription that failed (the log unreachable) and are tried again after a pause, missing nothing.", prometheus.CounterValue)
	slowCloses       = newMetric("server", "slow_closes_total", "Connections closed because the client did not read fast enough.", prometheus.CounterValue)
	authFailures     = newMetric("server", "auth_failures_total", "Failed authentications (wrong role secret or token).", prometheus.CounterValue)
	draining         = newMetric("server", "draining", "1 while the edge shuts down and sends its clients elsewhere.", prometheus.GaugeValue)
	ttlSwitches      = newMetric("server", "ttl_switches_total", "Dead man's switches (publishes with ttl) by outcome: fired (published ttl_message), skipped (something else came first), taken_over (published here by a standby, nobody having done it: armed on another edge, before a restart, or retried), passed (such a standby found it done), retried (the log did not take the message; armed again).", prometheus.CounterValue, "outcome")
	refused          = newMetric("server", "refused_requests_total", "Requests refused, by error code: error replies (and the refusals of requests without id, which get none), and refused WebSocket upgrades (invalid_appkey, unavailable while draining, too_many_connections).", prometheus.CounterValue, "code")

	// Per app: apps are configured, so the label's values are bounded.
	appPublished = newMetric("server", "app_published_messages_total", "Messages published by an app's clients (publish, write, delete).", prometheus.CounterValue, "app")
	appDelivered = newMetric("server", "app_delivered_messages_total", "Messages delivered to an app's subscribers.", prometheus.CounterValue, "app")
	appReceived  = newMetric("server", "app_received_bytes_total", "Bytes of WebSocket frames read from an app's clients.", prometheus.CounterValue, "app")
	appSent      = newMetric("server", "app_sent_bytes_total", "Bytes of WebSocket frames written to an app's clients.", prometheus.CounterValue, "app")

	channels      = newMetric("store", "channels", "Channels held in memory.", prometheus.GaugeValue)
	blocks        = newMetric("store", "blocks", "Storage blocks held in memory.", prometheus.GaugeValue)
	blockBytes    = newMetric("store", "block_bytes", "Capacity of the storage blocks held in memory, in bytes.", prometheus.GaugeValue)
	storeMemory   = newMetric("store", "memory_bytes", "What the store holds by its own account, the measure store_bytes bounds: its blocks plus an estimate per block and per channel, in bytes.", prometheus.GaugeValue)
	appended      = newMetric("store", "appended_messages_total", "Messages stored.", prometheus.CounterValue)
	expired       = newMetric("store", "expired_blocks_total", "Storage blocks deleted because their messages expired.", prometheus.CounterValue)
	evicted       = newMetric("store", "evicted_blocks_total", "Storage blocks deleted early to stay within the memory limits.", prometheus.CounterValue)
	cursorsBehind = newMetric("store", "out_of_sync_total", "Times a reader found the messages it had yet to read deleted.", prometheus.CounterValue)
)

// serverCollector reads a server's and its store's counters at each
// scrape: one snapshot of each.
type serverCollector struct {
	srv     *server.Server
	codecs  []string
	refusal []string // error codes, in the order of Stats.Refused
}

func newServerCollector(srv *server.Server) *serverCollector {
	return &serverCollector{srv: srv, codecs: server.Codecs(), refusal: server.RefusalCodes()}
}

var serverMetrics = []metric{
	connections, connectionsTotal, httpStreams, httpStreamsTotal, codecConns, subscriptions, published, delivered, received, sent,
	outOfSync, fastForwards, logResumes, logRetries, slowCloses, authFailures, draining, refused, ttlSwitches,
	appPublished, appDelivered, appReceived, appSent,
	channels, blocks, blockBytes, storeMemory, appended, expired, evicted, cursorsBehind,
}

// Describe implements prometheus.Collector.
func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range serverMetrics {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector.
func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(m metric, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v, labels...)
	}
	st := c.srv.Stats()
	emit(connections, float64(st.Connections))
	emit(connectionsTotal, float64(st.ConnectionsTotal))
	emit(httpStreams, float64(st.HTTPStreams))
	emit(httpStreamsTotal, float64(st.HTTPStreamsTotal))
	emit(subscriptions, float64(st.Subscriptions))
	for i, name := range c.codecs {
		emit(codecConns, float64(st.CodecConnections[i]), name)
		emit(published, float64(st.MessagesIn[i]), name)
		emit(delivered, float64(st.MessagesOut[i]), name)
		emit(received, float64(st.BytesIn[i]), name)
		emit(sent, float64(st.BytesOut[i]), name)
	}
	emit(outOfSync, float64(st.OutOfSync))
	emit(fastForwards, float64(st.FastForward))
	emit(logResumes, float64(st.LogResumes))
	emit(logRetries, float64(st.LogRetries))
	emit(slowCloses, float64(st.SlowCloses))
	emit(authFailures, float64(st.AuthFailures))
	for i, code := range c.refusal {
		emit(refused, float64(st.Refused[i]), code)
	}
	emit(ttlSwitches, float64(st.TTL.Fired), "fired")
	emit(ttlSwitches, float64(st.TTL.Skipped), "skipped")
	emit(ttlSwitches, float64(st.TTL.TakenOver), "taken_over")
	emit(ttlSwitches, float64(st.TTL.Passed), "passed")
	emit(ttlSwitches, float64(st.TTL.Retried), "retried")
	for _, a := range st.Apps {
		emit(appPublished, float64(a.MessagesIn), a.Appkey)
		emit(appDelivered, float64(a.MessagesOut), a.Appkey)
		emit(appReceived, float64(a.BytesIn), a.Appkey)
		emit(appSent, float64(a.BytesOut), a.Appkey)
	}
	d := 0.0
	if c.srv.Draining() {
		d = 1
	}
	emit(draining, d)

	ss := c.srv.Store().Stats()
	emit(channels, float64(ss.Channels))
	emit(blocks, float64(ss.Blocks))
	emit(blockBytes, float64(ss.Bytes))
	emit(storeMemory, float64(ss.Memory))
	emit(appended, float64(ss.Appends))
	emit(expired, float64(ss.ExpiredBlocks))
	emit(evicted, float64(ss.EvictedBlocks))
	emit(cursorsBehind, float64(ss.OutOfSync))
}

// The journal's metrics (durable and clustered edges).
var (
	jPublished  = newMetric("journal", "published_messages_total", "Publishes the log (JetStream) stored and acknowledged.", prometheus.CounterValue)
	jFailed     = newMetric("journal", "failed_publishes_total", "Publishes the log did not store in time or refused; the client got an error.", prometheus.CounterValue)
	jRetries    = newMetric("journal", "publish_retries_total", "Publish attempts sent again for want of an acknowledgment (a leader change, NATS away).", prometheus.CounterValue)
	jStored     = newMetric("journal", "fed_messages_total", "Messages the feed brought from the log into this edge's store.", prometheus.CounterValue)
	jLag        = newMetric("journal", "feed_lag_messages", "Publishes the log acknowledged that this edge's feed has not brought into its store yet.", prometheus.GaugeValue)
	jApplied    = newMetric("journal", "feed_applied_sequence", "The highest log sequence this edge's store holds.", prometheus.GaugeValue)
	jRestarts   = newMetric("journal", "feed_restarts_total", "Consumers of the feed replaced because they stopped bringing what the stream holds.", prometheus.CounterValue)
	jOwn        = newMetric("journal", "feed_own_messages_total", "Messages of fed_messages_total that this edge, the stream's sole writer, appended from its own acknowledged publishes rather than reading them back.", prometheus.CounterValue)
	jFallbacks  = newMetric("journal", "feed_sole_fallbacks_total", "Times the sole writer went back to reading the stream (a sequence it did not publish, or whose acknowledgment did not come).", prometheus.CounterValue)
	jReads      = newMetric("journal", "log_reads_total", "Reads from the log of what this edge's store does not hold (catch-up, history, reads).", prometheus.CounterValue)
	jReconnects = newMetric("journal", "reconnects_total", "Reconnections of the edge's NATS connection.", prometheus.CounterValue)
	jConnected  = newMetric("journal", "connected", "1 while the edge's NATS connection is up.", prometheus.GaugeValue)
	jFenced     = newMetric("journal", "fenced_publishes_total", "Publishes failed as not stored because one sent after them was stored first and a fence took their place in the log.", prometheus.CounterValue)
	jReordered  = newMetric("journal", "reordered_publishes_total", "Publishes the log stored after one this edge sent later (the window fences leave; should stay 0).", prometheus.CounterValue)

	journalMetrics = []metric{jPublished, jFailed, jRetries, jStored, jLag, jApplied, jRestarts, jOwn, jFallbacks, jReads, jReconnects, jConnected, jFenced, jReordered}
)

// journalCollector reads a journal's counters at each scrape.
type journalCollector struct{ js []*journal.Journal }

// Describe implements prometheus.Collector.
func (c *journalCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range journalMetrics {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector.
func (c *journalCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.js[0].Stats()
	for _, j := range c.js[1:] {
		st.Add(j.Stats())
	}
	conn := 0.0
	if st.Connected {
		conn = 1
	}
	for _, v := range []struct {
		m metric
		v float64
	}{
		{jPublished, float64(st.Published)}, {jFailed, float64(st.Failed)}, {jRetries, float64(st.Retries)},
		{jStored, float64(st.Stored)}, {jLag, float64(st.Lag)}, {jApplied, float64(st.Applied)},
		{jRestarts, float64(st.FeedRestarts)}, {jOwn, float64(st.Own)}, {jFallbacks, float64(st.SoleFallbacks)}, {jReads, float64(st.Reads)}, {jReconnects, float64(st.Reconnects)}, {jConnected, conn},
		{jFenced, float64(st.Fenced)}, {jReordered, float64(st.Reordered)},
	} {
		ch <- prometheus.MustNewConstMetric(v.m.desc, v.m.kind, v.v)
	}
}

// The certificates' metrics.
var (
	certExpiry = newMetric("tls", "certificate_expiry_timestamp_seconds", "When the certificate served for a domain expires, in unix seconds.", prometheus.GaugeValue, "domain")
	obtained   = newMetric("tls", "certificates_obtained_total", "Certificates obtained or renewed from the ACME CA.", prometheus.CounterValue)
	certFailed = newMetric("tls", "certificate_failures_total", "Failed attempts to obtain or renew a certificate.", prometheus.CounterValue)
)

// tlsCollector reads a certificate manager at each scrape.
type tlsCollector struct{ tm *edgetls.Manager }

func newTLSCollector(tm *edgetls.Manager) *tlsCollector { return &tlsCollector{tm: tm} }

// Describe implements prometheus.Collector.
func (c *tlsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range []metric{certExpiry, obtained, certFailed} {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector.
func (c *tlsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, cert := range c.tm.Certificates() {
		ch <- prometheus.MustNewConstMetric(certExpiry.desc, certExpiry.kind, float64(cert.NotAfter.Unix()), cert.Name)
	}
	st := c.tm.Stats()
	ch <- prometheus.MustNewConstMetric(obtained.desc, obtained.kind, float64(st.Obtained))
	ch <- prometheus.MustNewConstMetric(certFailed.desc, certFailed.kind, float64(st.Failed))
}

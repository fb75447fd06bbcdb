// Package metrics exports an edge's counters in Prometheus' format.
//
// Nothing here sits on the hot path: the server and the store keep their
// own atomic counters (server.Stats, store.Stats), and a custom collector
// reads one snapshot of each per scrape. The one measurement the edge
// makes for this package is the first-delivery latency, which the server
// reports to the histogram returned by FirstDelivery (one observation per
// message, by the first subscriber's writer).
//
// Names follow sluice_<subsystem>_<name>_<unit>, with counters ending in
// _total; the subsystems are server (connections and traffic), hook (the
// apps' hooks and events), store (the
// channel buffers), journal (the log of a durable or clustered edge) and
// tls (certificates). docs/operations.md lists them all, and
// a test checks that it does.
package metrics

import (
	"net/http"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/server"
	edgetls "github.com/sluicehq/sluice/edge/tls"
)

// LatencyBuckets are the bounds, in seconds, of the first-delivery
// histogram: 100µs to 10s.
var LatencyBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// Metrics is an edge's Prometheus registry: the edge's collectors, plus
// the Go runtime's and the process's.
type Metrics struct {
	reg           *prometheus.Registry
	firstDelivery prometheus.Histogram
	ackLatency    prometheus.Histogram
}

// New returns a registry holding the runtime, process and build
// collectors and the first-delivery histogram; Watch and WatchTLS add an
// edge's server and certificates.
func New(version string) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		firstDelivery: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "sluice", Subsystem: "server", Name: "first_delivery_latency_seconds",
			Help:    "Time from a message being stored to its first delivery to a subscriber.",
			Buckets: LatencyBuckets,
		}),
		ackLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "sluice", Subsystem: "journal", Name: "publish_ack_latency_seconds",
			Help:    "Time from a publish's first send to the log to its acknowledgment (stored on a quorum).",
			Buckets: LatencyBuckets,
		}),
	}
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "sluice", Name: "build_info",
		Help:        "Always 1; the labels name the running build.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": runtime.Version()},
	})
	build.Set(1)
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build,
		m.firstDelivery,
	)
	return m
}

// AckLatency is the histogram to set as journal.Options.AckLatency; it is
// exported once WatchJournal is called.
func (m *Metrics) AckLatency() prometheus.Histogram { return m.ackLatency }

// WatchJournal exports a durable edge's journals (one per partition):
// publishes, the feeds and the NATS connection, summed over partitions.
func (m *Metrics) WatchJournal(js ...*journal.Journal) error {
	if err := m.reg.Register(m.ackLatency); err != nil {
		return err
	}
	return m.reg.Register(&journalCollector{js: js})
}

// FirstDelivery is the histogram to set as server.Options.FirstDelivery.
func (m *Metrics) FirstDelivery() prometheus.Histogram { return m.firstDelivery }

// Watch exports srv's counters and those of its store.
func (m *Metrics) Watch(srv *server.Server) error {
	if err := m.reg.Register(&hookCollector{srv: srv}); err != nil {
		return err
	}
	return m.reg.Register(newServerCollector(srv))
}

// WatchReady exports the edge's readiness, as ready reports it at each
// scrape: what /readyz answers 200 for. An alert on /readyz itself needs
// a prober; this is read with the other metrics, and scraped from a pod
// whether it is ready or not.
func (m *Metrics) WatchReady(ready func() bool) error {
	return m.reg.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "sluice", Subsystem: "server", Name: "ready",
		Help: "1 while the edge accepts connections (/readyz answers 200); 0 while it cannot (JetStream out of reach, behind, replaying; no certificate yet) or drains.",
	}, func() float64 {
		if ready() {
			return 1
		}
		return 0
	}))
}

// WatchTLS exports the certificates of tm: their expiry, and how many were
// obtained and failed.
func (m *Metrics) WatchTLS(tm *edgetls.Manager) error {
	return m.reg.Register(newTLSCollector(tm))
}

// Handler serves the metrics in Prometheus' text (or protobuf) format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

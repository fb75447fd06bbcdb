package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/edge/hook"
	"github.com/sluicehq/sluice/edge/server"
)

// The hooks' metrics, per app (apps are configured: the label's values
// are bounded), for the apps with hooks.
var (
	hookCalls      = newMetric("hook", "calls_total", "Hook calls by hook (connect, subscribe, publish) and outcome: allowed, denied, or failed (timed out, failed, or answered something that is not an answer; on_failure then decided).", prometheus.CounterValue, "app", "hook", "outcome")
	eventsQueued   = newMetric("hook", "events_queued_total", "Events queued to be posted to the app's backend.", prometheus.CounterValue, "app")
	eventsSent     = newMetric("hook", "events_delivered_total", "Events the app's backend acknowledged (2xx).", prometheus.CounterValue, "app")
	eventsDropped  = newMetric("hook", "events_dropped_total", "Events dropped: the queue was full (the backend has been down or slow for long), or they were still queued at shutdown's deadline.", prometheus.CounterValue, "app")
	eventsRetries  = newMetric("hook", "events_retries_total", "Failed posts of a batch of events, each retried after a backoff.", prometheus.CounterValue, "app")
	eventsPending  = newMetric("hook", "events_pending", "Events waiting to be posted.", prometheus.GaugeValue, "app")
	hookMetrics    = []metric{hookCalls, eventsQueued, eventsSent, eventsDropped, eventsRetries, eventsPending}
	hookOutcomeIdx = [3]string{"allowed", "denied", "failed"}
)

// hookCollector reads the server's hook counters at each scrape.
type hookCollector struct{ srv *server.Server }

// Describe implements prometheus.Collector.
func (c *hookCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range hookMetrics {
		ch <- m.desc
	}
}

// Collect implements prometheus.Collector.
func (c *hookCollector) Collect(ch chan<- prometheus.Metric) {
	emit := func(m metric, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(m.desc, m.kind, float64(v), labels...)
	}
	for appKey, st := range c.srv.HookStats() {
		for i, name := range hook.HookNames {
			h := st.Hooks[i]
			for j, v := range [3]uint64{h.Allowed, h.Denied, h.Failed} {
				emit(hookCalls, v, appKey, name, hookOutcomeIdx[j])
			}
		}
		emit(eventsQueued, st.Events.Queued, appKey)
		emit(eventsSent, st.Events.Delivered, appKey)
		emit(eventsDropped, st.Events.Dropped, appKey)
		emit(eventsRetries, st.Events.Retries, appKey)
		emit(eventsPending, uint64(st.Events.Pending), appKey)
	}
}

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/edge/api"
)

// apiRequests counts the server API's answers; its labels are bounded
// sets (configured apps, the API's methods and codes).
var apiRequests = newMetric("api", "requests_total", `Server API requests by app ("" without a valid API key), method ("unknown" for none) and code ("ok" or the error code, too_many_requests for the API rate limit).`, prometheus.CounterValue, "app", "method", "code")

// apiCollector reads the API's counts at each scrape.
type apiCollector struct{ h *api.Handler }

// Describe implements prometheus.Collector.
func (c *apiCollector) Describe(ch chan<- *prometheus.Desc) { ch <- apiRequests.desc }

// Collect implements prometheus.Collector.
func (c *apiCollector) Collect(ch chan<- prometheus.Metric) {
	for _, rc := range c.h.Stats() {
		ch <- prometheus.MustNewConstMetric(apiRequests.desc, apiRequests.kind, float64(rc.Count), rc.App, rc.Method, rc.Code)
	}
}

// WatchAPI exports the server API's request counts.
func (m *Metrics) WatchAPI(h *api.Handler) error {
	return m.reg.Register(&apiCollector{h: h})
}

package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
)

// Registry returns the registry, for the tests to gather it.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Names returns the names of the edge's own metrics (not the Go runtime's
// or the process's), sorted, for the test that docs/operations.md documents them.
func Names() []string {
	all := append(append(append([]metric(nil), serverMetrics...), hookMetrics...), apiRequests, certExpiry, obtained, certFailed)
	names := []string{"sluice_build_info", "sluice_server_first_delivery_latency_seconds", "sluice_server_ready"}
	for _, m := range all {
		names = append(names, m.name)
	}
	slices.Sort(names)
	return names
}

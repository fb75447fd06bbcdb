package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
)

// The dashboard and the alerting rules.
const (
	dashboardFile = "grafana/sluice.json"
	alertsFile    = "prometheus/alerts.yaml"
)

// prometheusOwn are the series Prometheus makes of every scrape, which
// no /metrics shows.
var prometheusOwn = []string{"up"}

// exportedMetrics returns the names of the series a durable edge's
// /metrics serves (the journal's are only there with a data directory),
// a histogram's and a summary's with their _bucket, _sum and _count.
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	e := edgecmdtest.Start(t, "cluster:\n  data_dir: "+t.TempDir()+"\n")
	resp, err := http.Get("http://" + e.Addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s, %v", resp.Status, err)
	}
	names := map[string]bool{}
	for sc := bufio.NewScanner(bytes.NewReader(body)); sc.Scan(); {
		// # TYPE name kind
		f := strings.Fields(sc.Text())
		if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
			continue
		}
		names[f[2]] = true
		if f[3] == "histogram" || f[3] == "summary" {
			for _, s := range []string{"_bucket", "_sum", "_count"} {
				names[f[2]+s] = true
			}
		}
	}
	if !names["sluice_server_connections"] || !names["sluice_journal_feed_lag_messages"] {
		t.Fatalf("/metrics of a durable edge lacks the server's or the journal's metrics:\n%s", body)
	}
	for _, n := range prometheusOwn {
		names[n] = true
	}
	return names
}

// dashboardQueries returns the PromQL of every panel's targets, nested
// rows' included, and of the template variables' label_values queries
// (their first argument).
func dashboardQueries(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
		Panels []panel `json:"panels"`
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if dash.UID == "" || dash.Title == "" || len(dash.Panels) == 0 {
		t.Fatalf("%s: uid %q, title %q, %d panels", dashboardFile, dash.UID, dash.Title, len(dash.Panels))
	}
	out := map[string]string{}
	for _, v := range dash.Templating.List {
		if q, ok := strings.CutPrefix(v.Definition, "label_values("); ok {
			if i := strings.LastIndexByte(q, ','); i >= 0 {
				out["variable "+v.Name] = q[:i]
			}
		}
	}
	ids := map[int]bool{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			if ids[p.ID] {
				t.Errorf("%s: two panels have id %d", dashboardFile, p.ID)
			}
			ids[p.ID] = true
			if p.Type != "row" && (p.Datasource.UID != "${datasource}" || len(p.Targets) == 0) {
				t.Errorf("%s: panel %q: datasource %q, %d targets: want the ${datasource} variable's queries", dashboardFile, p.Title, p.Datasource.UID, len(p.Targets))
			}
			for _, tg := range p.Targets {
				out[fmt.Sprintf("panel %q, %s", p.Title, tg.RefID)] = tg.Expr
			}
			walk(p.Panels)
		}
	}
	walk(dash.Panels)
	return out
}

// panel is what the test reads of a dashboard's panel.
type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []panel `json:"panels"`
}

// ruleFile is Prometheus' rule file format, of which alerts.yaml uses
// the alerting rules.
type ruleFile struct {
	Groups []struct {
		Name     string `json:"name"`
		Interval string `json:"interval,omitempty"`
		Rules    []struct {
			Alert         string            `json:"alert"`
			Expr          string            `json:"expr"`
			For           string            `json:"for,omitempty"`
			KeepFiringFor string            `json:"keep_firing_for,omitempty"`
			Labels        map[string]string `json:"labels"`
			Annotations   map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// alertQueries decodes the rule file strictly and returns each alert's
// expression.
func alertQueries(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	decodeStrict(t, alertsFile, yamlToJSON(t, alertsFile, data), &rf)
	out := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || out["alert "+r.Alert] != "" {
				t.Errorf("%s: group %s: an alert unnamed or named twice: %q", alertsFile, g.Name, r.Alert)
			}
			// Prometheus' durations are Go's, less ns and µs, plus d, w and y.
			if _, err := time.ParseDuration(r.For); r.For != "" && err != nil {
				t.Errorf("%s: %s: for %q: %v", alertsFile, r.Alert, r.For, err)
			}
			if !slices.Contains([]string{"critical", "warning"}, r.Labels["severity"]) || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: %s: want a severity of critical or warning, a summary and a description", alertsFile, r.Alert)
			}
			out["alert "+r.Alert] = r.Expr
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no alerts", alertsFile)
	}
	return out
}

// TestMonitoringMetricsExist checks that every metric the dashboard and
// the alerts query is one a real edge exports.
func TestMonitoringMetricsExist(t *testing.T) {
	t.Parallel()
	queries := dashboardQueries(t)
	for k, v := range alertQueries(t) {
		queries[k] = v
	}
	exported := exportedMetrics(t)
	for where, expr := range queries {
		names, err := metricNames(expr)
		if err != nil || len(names) == 0 {
			t.Errorf("%s: %q: metrics %q, %v", where, expr, names, err)
		}
		for _, n := range names {
			if !exported[n] {
				t.Errorf("%s: %s is not in an edge's /metrics", where, n)
			}
		}
	}
}

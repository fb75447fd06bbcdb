package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/metrics"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/internal/doctext"
	"github.com/sluicehq/sluice/internal/poll"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// edge runs a server with metrics on loopback until the test ends.
func edge(t *testing.T) (*metrics.Metrics, *server.Server, string) {
	t.Helper()
	m := metrics.New("test")
	e := servertest.Start(t, &server.Options{
		Apps: []*app.App{{Key: "k", Roles: map[string]*app.Role{
			"default": {Name: "default", Permissions: app.Permissions{Publish: []string{"*"}, Subscribe: []string{"*"}}},
			"admin":   {Name: "admin", Secret: "s3cret"},
		}}},
		FirstDelivery: m.FirstDelivery(),
	}, nil)
	if err := m.Watch(e.Server); err != nil {
		t.Fatal(err)
	}
	return m, e.Server, e.URL + "/v2?appkey=k"
}

// conn is a raw JSON RTM connection.
type conn struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, url string) *conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &conn{t: t, ws: ws}
}

// call sends a request and returns the next PDU's action.
func (c *conn) call(action string, body any) string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := json.Marshal(map[string]any{"action": action, "id": 1, "body": body})
	if err := c.ws.Write(ctx, websocket.MessageText, req); err != nil {
		c.t.Fatal(err)
	}
	return c.next()
}

func (c *conn) next() string {
	c.t.Helper()
	return servertest.Recv[servertest.PDU](c.t, c.ws, 5*time.Second).Action
}

// values gathers the registry into name{labels} -> value.
func values(t *testing.T, m *metrics.Metrics) map[string]float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, f := range fams {
		for _, mt := range f.Metric {
			key := f.GetName()
			for _, l := range mt.Label {
				key += "{" + l.GetName() + "=" + l.GetValue() + "}"
			}
			out[key] = value(mt)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// TestReadyGauge: sluice_server_ready is what the edge's readiness says
// at each scrape.
func TestReadyGauge(t *testing.T) {
	m := metrics.New("test")
	var ready atomic.Bool
	if err := m.WatchReady(ready.Load); err != nil {
		t.Fatal(err)
	}
	for _, want := range []bool{false, true, false} {
		ready.Store(want)
		if got := values(t, m)["sluice_server_ready"]; got != map[bool]float64{false: 0, true: 1}[want] {
			t.Fatalf("sluice_server_ready %v while ready is %v", got, want)
		}
	}
}

func TestCountersMoveWithTraffic(t *testing.T) {
	m, _, url := edge(t)
	before := values(t, m)
	sub := dial(t, url)
	if a := sub.call("rtm/subscribe", map[string]any{"channel": "c"}); a != "rtm/subscribe/ok" {
		t.Fatalf("subscribe: %s", a)
	}
	pub := dial(t, url)
	for range 3 {
		if a := pub.call("rtm/publish", map[string]any{"channel": "c", "message": "hi"}); a != "rtm/publish/ok" {
			t.Fatalf("publish: %s", a)
		}
	}
	for got := 0; got < 1; {
		if sub.next() == "rtm/subscription/data" {
			got++
		}
	}
	if a := pub.call("auth/authenticate", map[string]any{"method": "role_secret", "credentials": map[string]any{"hash": "x"}}); a != "auth/authenticate/error" {
		t.Fatalf("bad authenticate: %s", a)
	}
	if a := pub.call("rtm/publish", map[string]any{"channel": "$reserved", "message": "no"}); a != "rtm/publish/error" {
		t.Fatalf("publish to a reserved channel: %s", a)
	}

	var after map[string]float64
	poll.UntilNil(t, "3 deliveries and 3 first-delivery latencies in the metrics", func() error {
		after = values(t, m)
		d, l := after["sluice_server_delivered_messages_total{codec=json}"], after["sluice_server_first_delivery_latency_seconds"]
		if d < 3 || l < 3 {
			return fmt.Errorf("%v deliveries, %v latencies", d, l)
		}
		return nil
	})
	for _, tc := range []struct {
		name string
		want float64
	}{
		{"sluice_server_connections", 2},
		{"sluice_server_connections_total", 2},
		{"sluice_server_subscriptions", 1},
		{"sluice_server_published_messages_total{codec=json}", 3},
		{"sluice_server_delivered_messages_total{codec=json}", 3},
		{"sluice_server_auth_failures_total", 1},
		{"sluice_server_first_delivery_latency_seconds", 3},
		{"sluice_store_channels", 1},
		{"sluice_store_appended_messages_total", 3},
		{"sluice_server_draining", 0},
		{"sluice_server_refused_requests_total{code=authentication_failed}", 1},
		{"sluice_server_refused_requests_total{code=authorization_denied}", 1},
		{"sluice_server_refused_requests_total{code=too_many_requests}", 0},
		{"sluice_server_app_published_messages_total{app=k}", 3},
		{"sluice_server_app_delivered_messages_total{app=k}", 3},
	} {
		if got := after[tc.name] - before[tc.name]; got != tc.want {
			t.Errorf("%s moved by %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, name := range []string{"sluice_server_received_bytes_total{codec=json}", "sluice_server_sent_bytes_total{codec=json}",
		"sluice_server_app_received_bytes_total{app=k}", "sluice_server_app_sent_bytes_total{app=k}", "sluice_store_blocks", "sluice_store_block_bytes", "sluice_store_memory_bytes"} {
		if after[name] <= before[name] {
			t.Errorf("%s did not grow: %v -> %v", name, before[name], after[name])
		}
	}
}

func TestHandlerServesTextFormat(t *testing.T) {
	m, srv, _ := edge(t)
	srv.Shutdown(context.Background())
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		"# TYPE sluice_server_connections gauge",
		"# TYPE sluice_server_first_delivery_latency_seconds histogram",
		`sluice_server_published_messages_total{codec="msgpack"} 0`,
		"sluice_server_draining 1",
		`sluice_build_info{goversion="`,
		"go_goroutines ",
		"process_",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestNamesFollowConventionAndAreDocumented(t *testing.T) {
	page := doctext.Read(t, "docs/operations.md")
	for _, n := range metrics.Names() {
		if !strings.HasPrefix(n, "sluice_") {
			t.Errorf("%s lacks the sluice_ prefix", n)
		}
		if !strings.Contains(page, "`"+n+"`") {
			t.Errorf("docs/operations.md does not document %s", n)
		}
	}
}

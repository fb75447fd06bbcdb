package main

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestBenchDeltaSendsLess: with --delta, a feed's deliveries take a
// fraction of the bytes: the subscribers did subscribe with deltas (and
// checked every message after applying them: no errors), through the
// client or as raw subscribers.
func TestBenchDeltaSendsLess(t *testing.T) {
	base := startMetricsEdge(t, "requests_per_second: 1000000")
	url := "ws" + strings.TrimPrefix(base, "http")
	perDelivery := func(args ...string) float64 {
		before := sentBytes(t, base)
		res := benchJSON(t, url, append([]string{"fanout", "--payload", "feed", "--codec", "json",
			"--subscribers", "4", "--duration", "0.3"}, args...)...)
		if res.Expected == 0 || res.Lost != 0 || res.ErrorTotal != 0 {
			t.Fatalf("bench %q: owed %d, lost %d, errors %v", args, res.Expected, res.Lost, res.Errors)
		}
		return (sentBytes(t, base) - before) / float64(res.Expected)
	}
	for _, raw := range [][]string{nil, {"--raw-subscribers"}} {
		whole, deltas := perDelivery(raw...), perDelivery(append(raw, "--delta")...)
		if whole < 2048 || deltas > whole/4 {
			t.Errorf("%q: bytes sent per delivery: %.0f whole, %.0f with deltas; want over 2048 and under a quarter of it", raw, whole, deltas)
		}
	}
}

// sentBytes sums sluice_server_sent_bytes_total over its codecs.
func sentBytes(t *testing.T, base string) float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "sluice_server_sent_bytes_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}

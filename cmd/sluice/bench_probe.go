package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
)

// edgeProbes picks how to watch the edge: its memory and CPU from /proc
// for --edge-pid or for the process listening on the URL's port when the
// URL is on this host, else from the edge's /metrics; and that /metrics,
// when it answers, for the edge's own counters. It says what it found on
// w.
func edgeProbes(ctx context.Context, f *benchFlags, w io.Writer) (loadgen.Probe, *loadgen.MetricsProbe) {
	var metrics *loadgen.MetricsProbe
	if murl := metricsURL(f.common.url, f.metricsURL); murl != "" {
		metrics = &loadgen.MetricsProbe{URL: murl}
		if _, err := metrics.Scrape(ctx); err != nil {
			metrics = nil
		}
	}
	var probe loadgen.Probe
	pid := f.edgePID
	if pid == 0 {
		pid = localListener(f.common.url)
	}
	switch {
	case pid > 0:
		probe = loadgen.ProcProbe{PID: pid}
	case metrics != nil:
		probe = *metrics
	default:
		fmt.Fprintln(w, "sluice bench: the edge's memory and CPU are not reported (no --edge-pid, no /metrics)")
		return nil, nil
	}
	if _, err := probe.Sample(ctx); err != nil {
		fmt.Fprintf(w, "sluice bench: the edge's memory and CPU are not reported: %v\n", err)
		return nil, metrics
	}
	fmt.Fprintf(w, "sluice bench: edge memory and CPU from %s\n", probe.Source())
	return probe, metrics
}

// localListener returns the process listening on the URL's port when the
// URL's host is a loopback address, else 0.
func localListener(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"ws": "80", "wss": "443"}[u.Scheme]
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return 0
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	pid, err := loadgen.FindListener(p)
	if err != nil || pid == os.Getpid() {
		return 0
	}
	return pid
}

// metricsURL returns the metrics endpoint: the flag's value, or /metrics
// on the edge's own address; "" for "off".
func metricsURL(edge, flagValue string) string {
	switch flagValue {
	case "off":
		return ""
	case "":
	default:
		return flagValue
	}
	u, err := url.Parse(edge)
	if err != nil {
		return ""
	}
	u.Scheme = strings.Replace(strings.Replace(u.Scheme, "wss", "https", 1), "ws", "http", 1)
	u.Path, u.RawQuery = "/metrics", ""
	return u.String()
}

// fetchProfile takes a CPU profile of the edge for the window from its
// admin listener and writes it to path.
func fetchProfile(ctx context.Context, base string, window time.Duration, path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	err = loadgen.CPUProfile(ctx, base, window, out)
	return errors.Join(err, out.Close())
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/loadgen"
	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
)

// startJournalEdges starts n edges serving the demo app whose log of
// record is one stream on one embedded NATS node, as the edges of a
// cluster share theirs, and returns their URLs.
func startJournalEdges(t *testing.T, n int) []string {
	t.Helper()
	node := journaltest.Node(t)
	apps := []*app.App{app.Demo()}
	// The demo app has no channel rules: the stream keeps what the
	// default retention does, as `sluice edge` sizes it.
	r := store.Retention{}.Normalized()
	maxAge, replay := max(r.TTL+r.Grace, r.HistoryAge), r.TTL+r.Grace
	urls := make([]string, n)
	for i := range urls {
		j := journaltest.Open(t, node, &journal.Options{MaxAge: maxAge, Replay: replay})
		urls[i] = servertest.Start(t, &server.Options{Apps: apps, Limits: server.Limits{RequestsPerSecond: 1_000_000}}, &servertest.Options{Journal: j}).URL
	}
	return urls
}

// TestBenchAcrossEdges: with two --url, the publisher is on the first
// edge, the subscribers on both, every one of them gets every message,
// and the report has a line per edge.
func TestBenchAcrossEdges(t *testing.T) {
	urls := startJournalEdges(t, 2)
	tests := []struct {
		name string
		args []string
	}{
		{"max rate", nil},
		{"fixed rate", []string{"--rate", "200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"fanout", "--url", urls[0], "--url", urls[1], "--subscribers", "10",
				"--warmup", "0.1", "--duration", "0.5", "--drain", "2", "--quiet"}, tt.args...)
			res, table := benchBoth(t, args)
			if res.Lost != 0 || res.Duplicates != 0 || res.Reordered != 0 || res.ErrorTotal != 0 {
				t.Errorf("lost %d dup %d reordered %d errors %v", res.Lost, res.Duplicates, res.Reordered, res.Errors)
			}
			stored := res.Stored // each subscriber is owed every message
			if stored == 0 || res.Expected != stored*10 || len(res.Nodes) != 2 {
				t.Fatalf("owed %d deliveries of %d messages, %d edges reported", res.Expected, stored, len(res.Nodes))
			}
			for i, n := range res.Nodes {
				if n.Name != urls[i] || n.Subscribers != 5 || n.Expected != 5*stored || n.Lost != 0 || n.Latency.Count == 0 {
					t.Errorf("edge %d: %+v, want %s with 5 subscribers owed and given %d messages each", i, n, urls[i], stored)
				}
				if n.Delivered == 0 || n.DeliverRate == 0 {
					t.Errorf("edge %d: delivered %d (%.0f/s) in the window", i, n.Delivered, n.DeliverRate)
				}
				line := fmt.Sprintf(`(?m)^  node %d +%s%s: 5 subscribers, delivered \d+ in the window \(\S+/s\), p50 \S+  p99 \S+, lost 0 of the run's \d+ owed$`,
					i+1, regexp.QuoteMeta(urls[i]), map[bool]string{true: ` \(publishers\)`}[i == 0])
				if !regexp.MustCompile(line).MatchString(table) {
					t.Errorf("table lacks a line for edge %d (%s):\n%s", i+1, line, table)
				}
			}
		})
	}
}

// benchBoth runs sluice bench twice with args, for its JSON result and
// then its table.
func benchBoth(t *testing.T, args []string) (*loadgen.Result, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errw bytes.Buffer
	if err := runBench(ctx, append(args, "--json"), stdio{out: &out, errw: &errw}); err != nil {
		t.Fatalf("bench %q: %v (stderr %q)", args, err, errw.String())
	}
	var res loadgen.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("bench output is not a result: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := runBench(ctx, args, stdio{out: &out, errw: &errw}); err != nil {
		t.Fatalf("bench %q: %v (stderr %q)", args, err, errw.String())
	}
	return &res, out.String()
}

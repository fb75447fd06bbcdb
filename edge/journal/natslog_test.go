package journal

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// records is a slog handler keeping each record as "LEVEL msg peer=...
// attempts=...", for tests to compare.
type records struct {
	mu    sync.Mutex
	lines []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "peer" || a.Key == "attempts" {
			line += " " + a.Key + "=" + a.Value.String()
		}
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	return nil
}

// take returns the records since the last take, but for debug ones.
func (r *records) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, l := range r.lines {
		if !strings.HasPrefix(l, "DEBUG ") {
			out = append(out, l)
		}
	}
	r.lines = nil
	return out
}

// The texts NATS logs (nats-server v2.15: route.go, raft.go,
// jetstream_cluster.go, client.go's prefix of a connection's notices).
const (
	natsDialFailed   = "Error trying to connect to route (attempt %v): %v"
	natsRouteCreated = "%s - rid:%d - Route connection created"
)

// natsLog drives a natsLogger as NATS would and checks what reaches the
// edge's log.
type natsLog struct {
	t   *testing.T
	l   *natsLogger
	rec *records
}

func newNATSLog(t *testing.T) *natsLog {
	rec := &records{}
	return &natsLog{t: t, l: newNATSLogger(slog.New(rec)), rec: rec}
}

// dials reports failed dials of the route to addr at each attempt, four
// times each: a route's pooled connections each retry.
func (n *natsLog) dials(addr string, attempts ...int) {
	for _, a := range attempts {
		for range 4 {
			n.l.Errorf(natsDialFailed, a, "dial tcp "+addr+": connect: connection refused")
		}
	}
}

// check fails unless the lines logged (but for debug ones) since the
// last check are want.
func (n *natsLog) check(phase string, want ...string) {
	n.t.Helper()
	if got := n.rec.take(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		n.t.Errorf("%s logged:\n  %s\nwant:\n  %s", phase, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const (
	logWaitPeer = "INFO waiting for a cluster peer to come up: its route does not answer yet; retrying every second peer="
	logDown     = "WARN a cluster peer is down: its route does not answer; retrying every second, logged again after twice the attempts peer="
)

// TestNATSLoggerQuietsAFormingCluster: the waits of a cluster forming are
// INFO, once each; a peer that was up and goes down is a WARN at the 1st,
// 2nd, 4th, 8th attempt, not four times a second; its return is INFO.
func TestNATSLoggerQuietsAFormingCluster(t *testing.T) {
	n := newNATSLog(t)
	const peer = "127.0.0.1:6202"
	// Start: the peer is not up yet; NATS reports a first connect's
	// failure once an hour after the first.
	n.dials(peer, 1)
	for range 3 {
		n.l.Warnf("Waiting for routing to be established...")
	}
	n.l.Warnf("JetStream has not established contact with a meta leader")
	n.check("a forming cluster", logWaitPeer+peer,
		"INFO waiting for the cluster to form: a quorum of its nodes must be up and routed to each other")
	// The peer comes up, the cluster forms.
	n.l.Noticef(natsRouteCreated, peer, 7)
	n.l.Noticef(natsRouteCreated, "127.0.0.1:51234", 8) // a route it dialled to us
	n.l.Noticef("JetStream cluster new metadata leader: n2/demo")
	n.check("the cluster formed")
	if len(n.l.peers) != 1 {
		t.Errorf("the logger keeps %d addresses, want the one it failed to dial", len(n.l.peers))
	}
	// The peer goes down: every attempt reported, each four times.
	n.dials(peer, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	n.check("a peer down for 9 attempts", logDown+peer+" attempts=1", logDown+peer+" attempts=2",
		logDown+peer+" attempts=4", logDown+peer+" attempts=8")
	n.l.Noticef(natsRouteCreated, peer, 9)
	n.check("its return", "INFO a cluster peer is back: route connected peer="+peer)
	n.dials(peer, 1)
	n.check("down again", logDown+peer+" attempts=1")
}

// TestNATSLoggerAfterTheClusterFormed: a peer whose route never failed
// before is down at its first failure; the cluster's waits are warnings
// again and other errors keep their level; an unresolvable peer is one
// peer too.
func TestNATSLoggerAfterTheClusterFormed(t *testing.T) {
	n := newNATSLog(t)
	n.l.Noticef("Self is new JetStream cluster metadata leader")
	const other = "127.0.0.1:6203"
	n.dials(other, 1, 2)
	n.check("a peer down", logDown+other+" attempts=1", logDown+other+" attempts=2")
	n.l.Warnf("JetStream has not established contact with a meta leader")
	n.l.Errorf("Error on route: %v", "boom")
	n.check("the rest", "WARN JetStream has not established contact with a meta leader", "ERROR Error on route: boom")
	n.l.Errorf(natsDialFailed, 1, "dial tcp: lookup n9 on 127.0.0.53:53: no such host")
	n.l.Errorf(natsDialFailed, 1, "dial tcp: lookup n9 on 127.0.0.53:53: no such host")
	n.check("an unresolvable peer", logDown+"n9 attempts=1")
	if len(n.l.peers) != 2 {
		t.Errorf("the logger keeps %d addresses, want 2", len(n.l.peers))
	}
}

// TestRetryLogsTheWaitOnce: JetStream not answering yet (a cluster
// forming) is one INFO line however many tries it takes, not a warning
// with "context deadline exceeded" per try.
func TestRetryLogsTheWaitOnce(t *testing.T) {
	var rec records
	j := &Journal{log: slog.New(&rec)}
	j.opts.Stream = "S"
	tries := 0
	err := j.retry(context.Background(), "open stream S", func(context.Context) error {
		if tries++; tries < 4 {
			return context.DeadlineExceeded
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "INFO waiting for JetStream (a cluster answers once a quorum of its nodes is up)"
	if got := rec.take(); len(got) != 1 || got[0] != want {
		t.Errorf("3 failed tries logged %q, want one %q", got, want)
	}
}

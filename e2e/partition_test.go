package e2e

// A partition cuts the publishers' edge, whose node leads the channel's
// stream, from the other two (network namespaces, netns_test.go), once
// and then flapping, while connections on it publish with a window of
// acknowledgments outstanding. Every outcome must agree with the log:
// nothing answered "not stored" is in it, what was acknowledged is at
// its position once, and a connection's publishes are in the log in the
// order it sent them. A follower's edge cut says so on /readyz.

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// partitionTimeout is the edges' cluster.publish_timeout: short, so that
// the cuts outlast it.
const partitionTimeout = 3 * time.Second

// startNetCluster starts three edges, each in a namespace of lab, their
// log in partitions streams.
func startNetCluster(t *testing.T, lab *netLab, partitions int) *cluster {
	t.Helper()
	var routes []string
	for i := range 3 {
		routes = append(routes, fmt.Sprintf("nats-route://%s:6222", lab.RouteIP(i)))
	}
	c := &cluster{partitions: partitions}
	var procs []*process
	for i := range 3 {
		cfg := edgecmdtest.WriteConfig(t, fmt.Sprintf("cluster:\n  token: netns-test-route-token-0123456789\n"+
			"  client_listen: 127.0.0.1:4222\n  publish_timeout: %v\nlimits:\n  shutdown_timeout: 2s\n", partitionTimeout))
		c.nats = append(c.nats, "nats://127.0.0.1:4222")
		c.dialers = append(c.dialers, nsDialer{lab.ns[i]})
		procs = append(procs, lab.launchEdgeIn(i, "--listen", lab.ClientIP(i)+":8080", "--config", cfg,
			"--data-dir", filepath.Join(t.TempDir(), "data"), "--cluster-name", "netns",
			"--cluster-listen", lab.RouteIP(i)+":6222", "--cluster-routes", strings.Join(routes, ","),
			"--node-name", fmt.Sprintf("n%d", i), "--cluster-feed", clusterFeed(),
			"--cluster-partitions", strconv.Itoa(partitions)))
	}
	for _, p := range procs {
		c.edges = append(c.edges, waitReady(t, p))
	}
	return c
}

// fate is what a publish's reply said.
type fate int

const (
	pending   fate = iota
	stored         // ok, at pos
	notStored      // unavailable: "did not store the message, and will not"
	unknown        // unavailable: "may have been stored"
	otherErr
)

// pubOutcome is one publish and its reply.
type pubOutcome struct {
	fate   fate
	pos    rtm.Position
	reason string
}

// fateOf classifies a publish's reply.
func fateOf(err error) (fate, string) {
	if err == nil {
		return stored, ""
	}
	e, ok := rtm.AsError(err)
	switch {
	case !ok || e.Code != rtm.CodeUnavailable:
		return otherErr, err.Error()
	case strings.Contains(e.Reason, "and will not"):
		return notStored, e.Reason
	case strings.Contains(e.Reason, "may have been stored"):
		return unknown, e.Reason
	}
	return otherErr, e.Reason
}

// connPublisher publishes 1, 2, ... on one connection, window at a
// time, recording every outcome by number.
type connPublisher struct {
	k       int // the connection's number: its messages are k*msgBase + n
	c       *client.Client
	channel string
	mu      sync.Mutex
	outs    map[int]*pubOutcome
	sent    int
	done    chan struct{}
}

const (
	msgBase   = 1_000_000
	sentinel  = msgBase - 1
	pubWindow = 8
)

// run publishes until stop is closed, then waits for every reply.
func (p *connPublisher) run(stop <-chan struct{}) {
	defer close(p.done)
	slots := make(chan struct{}, pubWindow)
	pace := time.NewTicker(4 * time.Millisecond) // ~250 publishes/s per connection
	defer pace.Stop()
	for n := 1; ; n++ {
		select {
		case <-stop:
			for range pubWindow {
				slots <- struct{}{} // every reply is in
			}
			return
		case slots <- struct{}{}:
		}
		<-pace.C
		o := &pubOutcome{}
		p.mu.Lock()
		p.outs[n], p.sent = o, n
		p.mu.Unlock()
		err := p.c.PublishAsync(p.channel, int64(p.k*msgBase+n), func(pos rtm.Position, err error) {
			p.mu.Lock()
			o.fate, o.reason = fateOf(err)
			o.pos = pos
			p.mu.Unlock()
			<-slots
		})
		if err != nil {
			p.mu.Lock()
			o.fate, o.reason = otherErr, err.Error()
			p.mu.Unlock()
			<-slots
		}
	}
}

// logEntry is one message of the channel as read back from the log.
type logEntry struct {
	n   int
	pos rtm.Position
}

// readLog reads the channel back from position 1 on url until every
// connection's sentinel is there.
func readLog(t *testing.T, url, channel string, epoch uint64, conns int) []logEntry {
	t.Helper()
	var mu sync.Mutex
	var got []logEntry
	sentinels := 0
	c := dial(t, url, client.Options{AppKey: "demo"})
	first := rtm.Position{Epoch: epoch, Offset: 1}
	_, err := c.Subscribe(ctxFor(t), channel, &client.SubscribeOptions{Position: &first, Batch: 1}, func(m client.Message) {
		n, ok := m.Value.(int64)
		if !ok {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		got = append(got, logEntry{int(n), m.Position})
		if int(n)%msgBase == sentinel {
			sentinels++
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	poll.Within(t, afterFault, "every connection's last publish read back from the log", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return sentinels == conns
	})
	mu.Lock()
	defer mu.Unlock()
	return append([]logEntry(nil), got...)
}

// waitReadyz waits until url's /readyz answers 200.
func waitReadyz(t *testing.T, url string) {
	t.Helper()
	readyz := strings.Replace(url, "ws://", "http://", 1) + "/readyz"
	poll.Within(t, afterFault, "the edge ready again", func() bool {
		resp, err := http.Get(readyz)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// faultSchedule is a partition scenario: cuts of down, joined for up.
type faultSchedule struct {
	name     string
	cuts     int
	down, up time.Duration
}

func TestPartitionKeepsPublishFate(t *testing.T) {
	t.Parallel() // its namespaces, bridges and addresses are its own
	forPartitions(t, testPartitionKeepsPublishFate)
}

func testPartitionKeepsPublishFate(t *testing.T, partitions int) {
	lab := newNetLab(t, 3)
	c := startNetCluster(t, lab, partitions)
	for _, sc := range []faultSchedule{
		{"one cut", 1, 4 * partitionTimeout, 0},
		{"flapping", 3, 3 * time.Second, 4 * time.Second},
	} {
		t.Run(sc.name, func(t *testing.T) { partitionRun(t, lab, c, sc) })
	}
	t.Run("readiness", func(t *testing.T) { partitionReadiness(t, lab, c) })
}

// partitionReadiness cuts a follower's edge: within a few seconds its
// /readyz says it cannot reach the stream's leader, and once joined again
// it is ready.
func partitionReadiness(t *testing.T, lab *netLab, c *cluster) {
	cut := (c.leader(t, 0, "readiness") + 1) % 3
	readyz := strings.Replace(c.edges[cut].url, "ws://", "http://", 1) + "/readyz"
	lab.Cut(cut, true)
	var body string
	poll.Within(t, 15*time.Second, "the cut edge's /readyz saying it has no leader", func() bool {
		resp, err := http.Get(readyz)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "no leader")
	})
	lab.Cut(cut, false)
	t.Logf("cut: /readyz said %q", strings.TrimSpace(body))
	waitReadyz(t, c.edges[cut].url)
}

// partitionRun publishes on the stream leader's edge through sc's cuts
// and checks every outcome against the log, read back on another edge.
func partitionRun(t *testing.T, lab *netLab, c *cluster, sc faultSchedule) {
	channel := strings.ReplaceAll(sc.name, " ", "-")
	cut := c.leader(t, 0, channel)
	edge, reader := c.edges[cut], c.edges[(cut+1)%3]
	const conns = 3
	stop := make(chan struct{})
	pubs := make([]*connPublisher, conns)
	for k := range pubs {
		pubs[k] = &connPublisher{k: k + 1, c: dial(t, edge.url, client.Options{AppKey: "demo"}), channel: channel,
			outs: make(map[int]*pubOutcome), done: make(chan struct{})}
		go pubs[k].run(stop)
	}
	waitAcked(t, pubs, 50)
	for i := range sc.cuts {
		lab.Cut(cut, true)
		wait(sc.down)
		lab.Cut(cut, false)
		if i < sc.cuts-1 {
			wait(sc.up)
		}
	}
	waitAcked(t, pubs, 50) // joined: publishes go through again
	close(stop)
	for _, p := range pubs {
		<-p.done
	}
	waitReadyz(t, edge.url)
	var epoch uint64
	for _, p := range pubs {
		ctx, cancel := context.WithTimeout(context.Background(), afterFault)
		pos, err := p.c.Publish(ctx, channel, int64(p.k*msgBase+sentinel))
		cancel()
		if err != nil {
			t.Fatalf("connection %d: its last publish, after the cuts: %v", p.k, err)
		}
		epoch = pos.Epoch
	}
	checkFates(t, pubs, readLog(t, reader.url, channel, epoch, conns))
}

// checkFates compares every publish's outcome with the log.
func checkFates(t *testing.T, pubs []*connPublisher, log []logEntry) {
	t.Helper()
	at := make(map[int]int, len(log)) // a number's index in the log
	last := make(map[int]int)         // connection: its last number in the log so far
	reordered := 0
	for i, e := range log {
		if _, dup := at[e.n]; dup {
			t.Errorf("%d is in the log twice", e.n)
		}
		at[e.n] = i
		k, n := e.n/msgBase, e.n%msgBase
		if n < last[k] {
			reordered++
			t.Errorf("connection %d: %d (%s) stored after %d (%s), which it sent later", k, n, fateName(pubs, k, n), last[k], fateName(pubs, k, last[k]))
		}
		last[k] = max(last[k], n)
	}
	counts := map[fate]int{}
	unknownStored := 0
	byPos := make(map[rtm.Position]int) // acknowledged position: index in the log
	for _, p := range pubs {
		p.mu.Lock()
		for n := 1; n <= p.sent; n++ {
			o := p.outs[n]
			i, inLog := at[p.k*msgBase+n]
			counts[o.fate]++
			switch o.fate {
			case stored:
				if !inLog {
					t.Errorf("connection %d: %d acknowledged at %v is not in the log", p.k, n, o.pos)
				}
				byPos[o.pos] = i
			case notStored:
				if inLog {
					t.Errorf("connection %d: %d answered not stored (%q) is in the log at %v", p.k, n, o.reason, log[i].pos)
				}
			case unknown:
				if inLog {
					unknownStored++
				}
			default:
				t.Errorf("connection %d: %d answered %q", p.k, n, o.reason)
			}
		}
		p.mu.Unlock()
	}
	checkPositions(t, byPos)
	t.Logf("%d publishes: %d acknowledged, %d not stored, %d of unknown fate (%d of them in the log), %d other; "+
		"%d in the log, %d reordered", counts[stored]+counts[notStored]+counts[unknown]+counts[otherErr],
		counts[stored], counts[notStored], counts[unknown], unknownStored, counts[otherErr], len(log), reordered)
}

// acked counts the connection's acknowledged publishes.
func (p *connPublisher) acked() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, o := range p.outs {
		if o.fate == stored {
			n++
		}
	}
	return n
}

// waitAcked waits until every connection has n more publishes
// acknowledged.
func waitAcked(t *testing.T, pubs []*connPublisher, n int) {
	t.Helper()
	want := make([]int, len(pubs))
	for k, p := range pubs {
		want[k] = p.acked() + n
	}
	poll.Within(t, afterFault, fmt.Sprintf("%d more publishes acknowledged on each connection", n), func() bool {
		for k, p := range pubs {
			if p.acked() < want[k] {
				return false
			}
		}
		return true
	})
}

// wait lets the schedule's time pass: the faults are the events.
func wait(d time.Duration) { <-time.After(d) }

// fateName says what connection k's publish n was answered.
func fateName(pubs []*connPublisher, k, n int) string {
	p := pubs[k-1]
	p.mu.Lock()
	defer p.mu.Unlock()
	o := p.outs[n]
	if o == nil {
		return "never sent"
	}
	return [...]string{"pending", "acknowledged at " + o.pos.String(), "not stored", "fate unknown", "other"}[o.fate]
}

// checkPositions fails unless the acknowledged positions are in the
// order of the messages in the log: each names its own message.
func checkPositions(t *testing.T, byPos map[rtm.Position]int) {
	t.Helper()
	positions := slices.SortedFunc(maps.Keys(byPos), func(a, b rtm.Position) int { return cmp.Compare(a.Offset, b.Offset) })
	for k := 1; k < len(positions); k++ {
		if byPos[positions[k]] <= byPos[positions[k-1]] {
			t.Errorf("acknowledged at %v, but in the log before the one acknowledged at %v", positions[k], positions[k-1])
		}
	}
}

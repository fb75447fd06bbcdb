package e2e

// Durable and clustered edges on NATS JetStream, as an operator runs
// them: `sluice edge` processes with --data-dir and the --cluster-* flags,
// killed with SIGKILL mid-traffic. Nothing acknowledged may be lost,
// duplicated or reordered.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// cluster is n `sluice edge` processes whose embedded NATS nodes form one
// JetStream cluster; each node also serves NATS clients, so that a test
// can ask who leads the stream.
type cluster struct {
	edges []*edgeProcess
	nats  []string // each node's NATS client URL
	// dialers, when set, dial each node's NATS client URL (one in a
	// network namespace, netns_test.go).
	dialers []nats.CustomDialer
	// partitions is the log's cluster.partitions (0: the default, 1).
	partitions int
}

// startCluster starts n edges at once (each waits for the quorum before
// it writes its ready file), their log in partitions streams.
func startCluster(t *testing.T, n, partitions int) *cluster {
	t.Helper()
	ports := journaltest.FreePorts(t, 2*n)
	c := &cluster{partitions: partitions}
	var procs []*process
	for i := range n {
		cfg := edgecmdtest.WriteConfig(t, fmt.Sprintf("cluster:\n  client_listen: 127.0.0.1:%d\nlimits:\n  shutdown_timeout: 2s\n", ports[n+i]))
		c.nats = append(c.nats, fmt.Sprintf("nats://127.0.0.1:%d", ports[n+i]))
		args := append([]string{"--listen", "127.0.0.1:0", "--config", cfg}, clusterFlags(t, "e2e", ports[:n], i, partitions)...)
		procs = append(procs, launchEdge(t, args...))
	}
	for _, p := range procs {
		c.edges = append(c.edges, waitReady(t, p))
	}
	return c
}

// clusterFlags are the flags of edge i of a cluster whose nodes route on
// 127.0.0.1 at routePorts: its own data directory, the cluster's name,
// its route listener, every node's route, its node name, the feed and
// the log's partitions.
func clusterFlags(t *testing.T, name string, routePorts []int, i, partitions int) []string {
	t.Helper()
	var routes []string
	for _, p := range routePorts {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	return []string{"--data-dir", filepath.Join(t.TempDir(), "data"), "--cluster-name", name,
		"--cluster-listen", fmt.Sprintf("127.0.0.1:%d", routePorts[i]),
		"--cluster-routes", strings.Join(routes, ","), "--node-name", "n" + strconv.Itoa(i),
		"--cluster-feed", clusterFeed(), "--cluster-partitions", strconv.Itoa(max(partitions, 1))}
}

// forPartitions runs test, in parallel, on a log of one partition and on
// one of four (a stream each, with its own leader).
func forPartitions(t *testing.T, test func(t *testing.T, partitions int)) {
	for _, k := range []int{1, 4} {
		t.Run(fmt.Sprintf("partitions=%d", k), func(t *testing.T) {
			t.Parallel()
			test(t, k)
		})
	}
}

// streamOf is the stream that holds channel (of the demo app) in a log
// of partitions.
func streamOf(channel string, partitions int) string {
	return journal.StreamOf(journal.DefaultStream, partitions, chanlog.Partition("demo\x00"+channel, partitions))
}

// clusterFeed is the feed the cluster tests' edges run: SLUICE_E2E_FEED
// (all or interest), default interest (the edges' own default).
func clusterFeed() string {
	if f := os.Getenv("SLUICE_E2E_FEED"); f != "" {
		return f
	}
	return "interest"
}

// leader returns the index of the edge whose node leads the stream of
// channel, asking the node of edge ask. In a log in partitions it waits
// until the partition's preferred node leads (the edges move the lead
// there, journal/spread.go): a test that kills the leader must not find
// it moved just before. After a fault the lead comes back to the
// preferred node at the partition's next look (spreadEvery, 30 s): the
// wait is afterFault's.
func (c *cluster) leader(t *testing.T, ask int, channel string) int {
	t.Helper()
	var opts []nats.Option
	if c.dialers != nil {
		opts = append(opts, nats.SetCustomDialer(c.dialers[ask]))
	}
	nc, err := nats.Connect(c.nats[ask], opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var leader string
	poll.Within(t, afterFault, "a stream leader", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := js.Stream(ctx, streamOf(channel, c.partitions))
		if err != nil {
			return false
		}
		info, err := s.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" {
			return false
		}
		leader = info.Cluster.Leader
		if c.partitions > 1 {
			// The nodes are n0, n1, ... in name order.
			return leader == fmt.Sprintf("n%d", chanlog.Partition("demo\x00"+channel, c.partitions)%len(c.nats))
		}
		return true
	})
	i, err := strconv.Atoi(strings.TrimPrefix(leader, "n"))
	if err != nil {
		t.Fatalf("leader %q is none of ours", leader)
	}
	return i
}

// acked is an acknowledged publish.
type acked struct {
	pos rtm.Position
	n   int
}

// publishLoop publishes from, from+1, ... to channel on c, one at a
// time, until stop is closed or count are acknowledged; failures are
// counted, and publishing goes on.
type publishLoop struct {
	mu     sync.Mutex
	acks   []acked
	failed int
	done   chan struct{}
}

func startPublishing(c *client.Client, channel string, from, count int, stop <-chan struct{}) *publishLoop {
	l := &publishLoop{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for n := from; l.acked() < count; n++ {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			pos, err := c.Publish(ctx, channel, n)
			cancel()
			l.mu.Lock()
			if err != nil {
				l.failed++
			} else {
				l.acks = append(l.acks, acked{pos, n})
			}
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *publishLoop) acked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acks)
}

// collector records the numbers a subscription delivers, in order.
type collector struct {
	mu    sync.Mutex
	got   []int
	whole int          // len(got) at the end of the last whole batch
	last  rtm.Position // the resume point after it
}

func (c *collector) handle(m client.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if n, ok := m.Value.(int64); ok {
		c.got = append(c.got, int(n))
	}
	if m.EndOfBatch {
		c.whole, c.last = len(c.got), m.Position
	}
}

// snapshot returns the numbers of the whole batches delivered so far and
// the position to resume from after them.
func (c *collector) snapshot() ([]int, rtm.Position) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got[:c.whole]), c.last
}

// has reports whether the collector has seen n.
func (c *collector) has(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.got, n)
}

// afterFault bounds how long deliveries may lag after a node is killed:
// an edge whose feed's consumer lived on that node recreates it once the
// cluster has a meta leader again, with nats.go's backoff (1 s, 2 s, 4 s,
// ...): tens of seconds on a loaded machine. Messages come late, never
// lost.
const afterFault = 90 * time.Second

// checkDelivered fails unless got holds every acknowledged number once,
// in the order acknowledged, and no number twice (an unacknowledged
// publish may be there, once).
func checkDelivered(t *testing.T, what string, acks []acked, got []int) {
	t.Helper()
	seen := make(map[int]int, len(got))
	for i, n := range got {
		if j, dup := seen[n]; dup {
			t.Fatalf("%s: %d delivered twice (at %d and %d)", what, n, j, i)
		}
		seen[n] = i
	}
	prev := -1
	for _, a := range acks {
		i, ok := seen[a.n]
		if !ok {
			t.Fatalf("%s: acknowledged message %d (at %v) is missing; %d delivered", what, a.n, a.pos, len(got))
		}
		if i < prev {
			t.Fatalf("%s: acknowledged message %d delivered before an earlier one", what, a.n)
		}
		prev = i
	}
}

// subscribeFrom subscribes to channel on url from pos (or the next
// message when pos is nil) into a new collector.
func subscribeFrom(t *testing.T, url, channel string, pos *rtm.Position) *collector {
	t.Helper()
	col := &collector{}
	c := dial(t, url, client.Options{AppKey: "demo"})
	if _, err := c.Subscribe(ctxFor(t), channel, &client.SubscribeOptions{Position: pos}, col.handle); err != nil {
		t.Fatalf("subscribe to %s on %s: %v", channel, url, err)
	}
	return col
}

// Three edges, three NATS nodes: what is published on one edge reaches the
// subscribers of the others, in order; a subscriber of an edge killed with
// SIGKILL resumes on another edge from its last position with no gap and
// no duplicate.
func TestClusterFanOutAndResume(t *testing.T) {
	t.Parallel()
	forPartitions(t, testClusterFanOutAndResume)
}

func testClusterFanOutAndResume(t *testing.T, partitions int) {
	c := startCluster(t, 3, partitions)
	a, b, cc := c.edges[0], c.edges[1], c.edges[2]
	onB := subscribeFrom(t, b.url, "room", nil)
	onC := subscribeFrom(t, cc.url, "room", nil)
	onA := subscribeFrom(t, a.url, "room", nil)
	pub := dial(t, cc.url, client.Options{AppKey: "demo"})
	const half = 100
	loop := startPublishing(pub, "room", 1, half, nil)
	<-loop.done
	poll.Until(t, "edge A's subscriber to get the first half", func() bool { return onA.has(half) })
	_, resume := onA.snapshot()
	a.process.kill() // SIGKILL: no drain

	loop2 := startPublishing(pub, "room", half+1, half, nil)
	<-loop2.done
	acks := append(slices.Clone(loop.acks), loop2.acks...)
	last := acks[len(acks)-1].n
	for _, s := range []struct {
		name string
		col  *collector
	}{{"subscriber on B", onB}, {"subscriber on C", onC}} {
		poll.Within(t, afterFault, s.name+" to get everything", func() bool { return s.col.has(last) })
		got, _ := s.col.snapshot()
		checkDelivered(t, s.name, acks, got)
	}
	moved := subscribeFrom(t, b.url, "room", &resume)
	poll.Within(t, afterFault, "the moved subscriber to get the second half", func() bool { return moved.has(last) })
	got, _ := moved.snapshot()
	checkDelivered(t, "subscriber moved from A to B", loop2.acks, got)
	if loop.failed+loop2.failed > 0 {
		t.Logf("%d publishes failed and were not acknowledged", loop.failed+loop2.failed)
	}
}

// The node leading the stream is killed with SIGKILL mid-traffic: the
// publishes go on (retried across the election), and every acknowledged
// message is delivered once, in order, both live and to a subscriber that
// reads the channel from its first position afterwards.
func TestClusterLeaderKilled(t *testing.T) {
	t.Parallel()
	forPartitions(t, testClusterLeaderKilled)
}

func testClusterLeaderKilled(t *testing.T, partitions int) {
	c := startCluster(t, 3, partitions)
	l := c.leader(t, 0, "chaos")
	pubEdge, readEdge := c.edges[(l+1)%3], c.edges[(l+2)%3]
	live := subscribeFrom(t, readEdge.url, "chaos", nil)
	pub := dial(t, pubEdge.url, client.Options{AppKey: "demo"})
	const total = 300
	loop := startPublishing(pub, "chaos", 1, total, nil)
	poll.Until(t, "a third of the publishes", func() bool { return loop.acked() >= total/3 })
	c.edges[l].process.kill()
	<-loop.done
	acks := loop.acks
	poll.Within(t, afterFault, "the live subscriber to get every acknowledged message", func() bool {
		return live.has(acks[len(acks)-1].n)
	})
	got, _ := live.snapshot()
	checkDelivered(t, "live subscriber", acks, got)

	first := rtm.Position{Epoch: acks[0].pos.Epoch, Offset: 1}
	replay := subscribeFrom(t, readEdge.url, "chaos", &first)
	poll.Within(t, afterFault, "the replay from position 1", func() bool { return replay.has(acks[len(acks)-1].n) })
	got, _ = replay.snapshot()
	checkDelivered(t, "replay from position 1", acks, got)
	t.Logf("%d acknowledged, %d failed across the election", len(acks), loop.failed)
}

// A durable single edge killed with SIGKILL mid-publish keeps, after a
// restart on the same data directory, every acknowledged message at its
// position, and a subscriber resumes where it was.
func TestDurableEdgeSurvivesKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	e := startEdgeProcess(t, "--data-dir", dir)
	sub := subscribeFrom(t, e.url, "dur", nil)
	pub := dial(t, e.url, client.Options{AppKey: "demo"})
	stop := make(chan struct{})
	loop := startPublishing(pub, "dur", 1, 1<<30, stop)
	poll.Until(t, "200 acknowledged publishes", func() bool { return loop.acked() >= 200 })
	poll.Until(t, "the subscriber to be past 100", func() bool { return sub.has(100) })
	e.process.kill()
	got, resume := sub.snapshot()
	close(stop)
	pub.Close() // the publish in flight fails now, not when its wait ends
	<-loop.done
	acks := slices.Clone(loop.acks)

	e2 := startEdgeProcess(t, "--data-dir", dir)
	rc := dial(t, e2.url, client.Options{AppKey: "demo"})
	for _, a := range acks {
		v, pos, err := rc.Read(ctxFor(t), "dur", client.AtPosition(a.pos))
		if err != nil || pos != a.pos || v != int64(a.n) {
			t.Fatalf("read at %v after the restart = %v at %v (%v), want %d", a.pos, v, pos, err, a.n)
		}
	}
	resumed := subscribeFrom(t, e2.url, "dur", &resume)
	more := startPublishing(rc, "dur", acks[len(acks)-1].n+1000, 20, nil)
	<-more.done
	acks = append(acks, more.acks...)
	last := acks[len(acks)-1].n
	poll.Until(t, "the resumed subscriber to get what was published after the restart", func() bool { return resumed.has(last) })
	rest, _ := resumed.snapshot()
	// What it had before the kill, then what it got from its resume
	// point: together, every acknowledged message once.
	checkDelivered(t, "subscriber across the restart", acks, append(got, rest...))
}

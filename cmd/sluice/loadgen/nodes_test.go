package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// nodeBroker is the fake broker behind several nodes: every node reaches
// the same broker, and it remembers who dialed which.
type nodeBroker struct {
	*broker
	n      int
	mu     sync.Mutex
	dialed []int // connections dialed, by node
}

func newNodeBroker(n int) *nodeBroker {
	return &nodeBroker{broker: newBroker(), n: n, dialed: make([]int, n)}
}

func (b *nodeBroker) Nodes() []string {
	names := make([]string, b.n)
	for i := range names {
		names[i] = fmt.Sprintf("fake-%d", i+1)
	}
	return names
}

func (b *nodeBroker) DialNode(_ context.Context, i int, _ func(error)) (Conn, error) {
	b.mu.Lock()
	b.dialed[i]++
	b.mu.Unlock()
	return b.dialNode(i), nil
}

func TestRunSpreadsSubscribersOverNodes(t *testing.T) {
	tests := []struct {
		name     string
		nodes    int
		dropOn   int // node whose subscribers lose lane 0's message 3; -1 none
		wantLost []uint64
	}{
		{"three nodes", 3, -1, []uint64{0, 0, 0}},
		{"one node loses", 3, 1, []uint64{0, 2, 0}},
		{"two nodes", 2, -1, []uint64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newNodeBroker(tt.nodes)
			cfg := quick(Fanout)
			cfg.Subscribers, cfg.Inflight = 6, 2
			if tt.dropOn >= 0 {
				// Subscribers are numbered in the order they subscribe,
				// not by index: drop by the node the run put them on.
				b.fault = func(sub int, st Stamp) action {
					return pick(st.Publisher == 0 && st.Seq == 3 && nodeOfSub(b, sub) == tt.dropOn, dropIt)
				}
			}
			res, err := Run(context.Background(), b, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkNodes(t, b, res, tt.wantLost)
		})
	}
}

// nodeOfSub returns the node subscriber number sub (in subscription
// order) dialed.
func nodeOfSub(b *nodeBroker, sub int) int {
	b.broker.mu.Lock()
	defer b.broker.mu.Unlock()
	for _, cs := range b.broker.subs {
		for _, c := range cs {
			if c.idx == sub {
				return c.node
			}
		}
	}
	return -1
}

// checkNodes checks a run's figures by node against what the broker saw.
func checkNodes(t *testing.T, b *nodeBroker, res *Result, wantLost []uint64) {
	t.Helper()
	if len(res.Nodes) != b.n {
		t.Fatalf("%d nodes in the result, want %d", len(res.Nodes), b.n)
	}
	per := res.Config.Subscribers / b.n
	var expected, lost uint64
	var delivered int64
	for i, n := range res.Nodes {
		wantDialed := per
		if i == 0 {
			wantDialed++ // the publisher
		}
		if b.dialed[i] != wantDialed {
			t.Errorf("node %d: %d connections dialed, want %d", i, b.dialed[i], wantDialed)
		}
		if n.Subscribers != per || n.Delivered == 0 || n.DeliverRate == 0 || n.Latency.Count == 0 || n.Lost != wantLost[i] {
			t.Errorf("node %d: %+v, want %d subscribers, deliveries and %d lost", i, n, per, wantLost[i])
		}
		expected, lost, delivered = expected+n.Expected, lost+n.Lost, delivered+n.Latency.Count
	}
	if expected != res.Expected || lost != res.Lost || delivered != res.Latency.Count {
		t.Errorf("nodes add up to %d owed, %d lost, %d latencies; the run's %d, %d, %d",
			expected, lost, delivered, res.Expected, res.Lost, res.Latency.Count)
	}
	var out bytes.Buffer
	if err := res.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	for i := range b.n {
		want := fmt.Sprintf("node %d", i+1)
		if i == 0 {
			want += "       fake-1 (publishers): "
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestOneNodeIsASingleNodeRun(t *testing.T) {
	b := newNodeBroker(1)
	res, err := Run(context.Background(), b, quick(Fanout), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := res.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if res.Nodes != nil || strings.Contains(out.String(), "node 1") {
		t.Errorf("a one-node run reports nodes: %+v\n%s", res.Nodes, out.String())
	}
}

package loadgen

import "context"

// NodeResult is what the subscribers of one node of a NodeDriver saw.
type NodeResult struct {
	// Name is the node's, from NodeDriver.Nodes; the first node's
	// connections also publish.
	Name string `json:"name"`
	// Subscribers is how many of the node's subscribers connected.
	Subscribers int `json:"subscribers"`
	// Delivered counts distinct messages its subscribers received in
	// the window; DeliverRate is per second.
	Delivered   uint64  `json:"delivered"`
	DeliverRate float64 `json:"deliver_rate"`
	// Latency is from the publish (on the first node) to the delivery
	// on this one, over the measured window.
	Latency LatencyStats `json:"latency"`
	// Expected and Lost are as Result's, for this node's subscribers.
	Expected uint64 `json:"expected"`
	Lost     uint64 `json:"lost"`
}

// nodes is a run's view of a NodeDriver's nodes; its zero value is a
// single-node run.
type nodes struct {
	nd    NodeDriver
	names []string
	lat   []*Latency // by node: the latencies of its subscribers
	// res is the figures by node: Name at the start, Subscribers once
	// connected, Delivered and Latency at the window's end, the rest by
	// countLoss and finish.
	res []NodeResult
	// started is the deliveries by node at the window's start.
	started []int64
}

// newNodes returns the nodes of d, none unless it is a NodeDriver with at
// least two.
func newNodes(d Driver) nodes {
	nd, ok := d.(NodeDriver)
	if !ok {
		return nodes{}
	}
	names := nd.Nodes()
	if len(names) < 2 {
		return nodes{}
	}
	n := nodes{nd: nd, names: names, lat: make([]*Latency, len(names)), res: make([]NodeResult, len(names))}
	for i := range n.lat {
		n.lat[i] = NewLatency(latencyShards)
		n.res[i].Name = names[i]
	}
	return n
}

// of returns the node of subscriber i (0 in a single-node run).
func (n *nodes) of(i int) int {
	if len(n.names) == 0 {
		return 0
	}
	return i % len(n.names)
}

// dial opens a connection to a node, or to the driver's one server.
func (r *run) dial(ctx context.Context, node int) (Conn, error) {
	if r.nodes.nd == nil {
		return r.d.Dial(ctx, r.connProblem)
	}
	return r.nodes.nd.DialNode(ctx, node, r.connProblem)
}

// dialSubscriber dials a subscriber's connection to node: through the
// driver's DialSubscriber if it has one.
func (r *run) dialSubscriber(ctx context.Context, node int) (Conn, error) {
	if sd, ok := r.d.(SubscriberDialer); ok {
		return sd.DialSubscriber(ctx, node, r.connProblem)
	}
	return r.dial(ctx, node)
}

// connected counts subscriber i, just connected, on its node.
func (n *nodes) connected(node int) {
	if n.res != nil {
		n.res[node].Subscribers++
	}
}

// startWindow forgets the latencies before the window and counts the
// deliveries so far.
func (n *nodes) startWindow(subs []*subscriber) {
	for _, l := range n.lat {
		l.Reset()
	}
	n.started = n.delivered(subs)
}

// delivered sums the subscribers' deliveries by node.
func (n *nodes) delivered(subs []*subscriber) []int64 {
	if n.res == nil {
		return nil
	}
	d := make([]int64, len(n.res))
	for _, s := range subs {
		d[s.node] += s.tally.delivered.Load()
	}
	return d
}

// endWindow keeps the window's latencies, and returns those of every
// node together (false in a single-node run): the run's latency then adds
// up the nodes' exactly, rather than being read a moment apart.
func (n *nodes) endWindow(subs []*subscriber) (LatencyStats, bool) {
	if n.lat == nil {
		return LatencyStats{}, false
	}
	ended := n.delivered(subs)
	all := newHistogram()
	for i, l := range n.lat {
		n.res[i].Latency = l.totalInto(all)
		if n.started != nil {
			n.res[i].Delivered = uint64(ended[i] - n.started[i])
		}
	}
	return Summarize(all), true
}

// rates turns the nodes' deliveries into rates over a window of secs.
func (n *nodes) rates(secs float64) {
	for i := range n.res {
		if secs > 0 {
			n.res[i].DeliverRate = float64(n.res[i].Delivered) / secs
		}
	}
}

// count adds a subscriber's deliveries owed and lost to its node's.
func (n *nodes) count(node int, expected, lost uint64) {
	if n.res != nil {
		n.res[node].Expected += expected
		n.res[node].Lost += lost
	}
}

package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// InfoTimeout bounds the stream info request of Info: an operator asking
// about a cluster that has lost its stream leader gets what this edge
// knows at once, not a hung request.
const InfoTimeout = 2 * time.Second

// Info is what an operator asks of the log: the stream as JetStream
// describes it (its replicas and leader, its size and sequences) and how
// far this edge's replica of it has got.
type Info struct {
	Stream string `json:"stream"`
	// Epoch is the stream's incarnation, the EPOCH of every position.
	Epoch uint64 `json:"epoch"`
	// Server is the NATS server this edge's connection is on.
	Server string `json:"server,omitempty"`
	// Connected says whether that connection is up.
	Connected bool `json:"connected"`
	// Available says whether JetStream answered the stream info within
	// InfoTimeout; without it, the fields below up to Applied are zero.
	Available bool `json:"available"`
	// Cluster is the stream's cluster ("" on a single node that is no
	// cluster's), Leader the server that leads the stream, Peers every
	// server holding a replica of it, the leader first.
	Cluster  string `json:"cluster,omitempty"`
	Leader   string `json:"leader,omitempty"`
	Peers    []Peer `json:"peers,omitempty"`
	Replicas int    `json:"replicas,omitempty"`
	Messages uint64 `json:"messages"`
	Bytes    uint64 `json:"bytes"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// Applied is the highest sequence this edge's store holds; Lag how
	// many sequences of the stream it has still to apply (LastSeq -
	// Applied, 0 when it has them all).
	Applied uint64 `json:"applied"`
	Lag     uint64 `json:"lag"`
}

// Peer is one server holding a replica of the stream.
type Peer struct {
	Name string `json:"name"`
	// Leader says it leads the stream; Current that it has every
	// message the leader has; Offline that the leader has not heard from
	// it lately.
	Leader  bool `json:"leader,omitempty"`
	Current bool `json:"current"`
	Offline bool `json:"offline,omitempty"`
	// Lag is how many operations it is behind the leader.
	Lag uint64 `json:"lag,omitempty"`
}

// Info asks JetStream for the stream's state (within InfoTimeout) and
// returns it with this edge's progress. A stream JetStream does not
// describe in time is not an error: Info returns what the edge knows,
// with Available false, and the error for the caller to log.
func (j *Journal) Info(ctx context.Context) (Info, error) {
	st := j.Stats()
	out := Info{Stream: j.opts.Stream, Epoch: j.epoch, Server: j.nc.ConnectedServerName(),
		Connected: st.Connected, Applied: st.Applied}
	ctx, cancel := context.WithTimeout(ctx, InfoTimeout)
	defer cancel()
	si, err := j.stream.Info(ctx)
	if err != nil {
		return out, fmt.Errorf("journal: info of stream %s: %w", j.opts.Stream, err)
	}
	out.Available = true
	out.Replicas = si.Config.Replicas
	out.Messages, out.Bytes = si.State.Msgs, si.State.Bytes
	out.FirstSeq, out.LastSeq = si.State.FirstSeq, si.State.LastSeq
	if out.LastSeq > out.Applied {
		out.Lag = out.LastSeq - out.Applied
	}
	if ci := si.Cluster; ci != nil {
		out.Cluster, out.Leader = ci.Name, ci.Leader
		if ci.Leader != "" {
			out.Peers = append(out.Peers, Peer{Name: ci.Leader, Leader: true, Current: true})
		}
		for _, p := range ci.Replicas {
			if p != nil {
				out.Peers = append(out.Peers, Peer{Name: p.Name, Current: p.Current, Offline: p.Offline, Lag: p.Lag})
			}
		}
	}
	return out, nil
}

// NodeInfo is what an embedded node knows of its JetStream cluster.
type NodeInfo struct {
	// Name is the node's server name; Cluster its cluster's name ("" for
	// a node alone).
	Name    string `json:"name"`
	Cluster string `json:"cluster,omitempty"`
	// MetaLeader is the server that leads the cluster's JetStream meta
	// group (which places streams); "" while none is elected, or alone.
	MetaLeader string `json:"meta_leader,omitempty"`
	// Peers names every server of the meta group, this one included, in
	// order; ClusterSize is how many JetStream expects.
	Peers       []string `json:"peers,omitempty"`
	ClusterSize int      `json:"cluster_size,omitempty"`
}

// errNoJetStream: the node runs without JetStream (it never does once
// StartNode returned, unless it is shutting down).
var errNoJetStream = errors.New("journal: the node's JetStream is not running")

// Info returns the node's name and what it knows of its cluster's meta
// group, from the server itself (no request goes out).
func (n *Node) Info() (NodeInfo, error) {
	out := NodeInfo{Name: n.srv.Name(), Cluster: n.srv.ClusterName()}
	jsi, err := n.srv.Jsz(&server.JSzOptions{})
	if err != nil {
		return out, fmt.Errorf("journal: node info: %w", err)
	}
	if jsi.Disabled {
		return out, errNoJetStream
	}
	if m := jsi.Meta; m != nil {
		out.MetaLeader, out.ClusterSize = m.Leader, m.Size
		out.Peers = append(out.Peers, out.Name)
		for _, p := range m.Replicas {
			if p != nil && !slices.Contains(out.Peers, p.Name) {
				out.Peers = append(out.Peers, p.Name)
			}
		}
		slices.Sort(out.Peers)
	}
	return out, nil
}

package journal

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// How often a partition's journal looks whether its stream's leader is
// where it should be (spread), and how long it first waits: a cluster
// that just formed elects its leaders within seconds.
const (
	spreadEvery = 30 * time.Second
	spreadFirst = 2 * time.Second
)

// spread keeps the leaders of a log's partitions spread over the nodes:
// JetStream elects each stream's leader among its replicas, and nothing
// keeps four partitions on three nodes from having one leader, which
// would take every write as one stream's leader did. Partition p's
// preferred leader is the p-th of its replicas in name order (mod their
// count), the same on every edge; the edge whose NATS server it is asks
// the stream's leader to step down in its favour when it is current.
// A leader lost to a failure comes back this way once the node is.
func (j *Journal) spread() {
	t := time.NewTimer(spreadFirst)
	defer t.Stop()
	for {
		select {
		case <-j.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := j.claimLeader(ctx); err != nil {
			j.log.Debug("journal: spreading the partitions' leaders", "stream", j.opts.Stream, "err", err)
		}
		cancel()
		t.Reset(spreadEvery)
	}
}

// claimLeader has this edge's NATS server take the lead of the stream if
// it is the partition's preferred leader, current, and not leading it.
func (j *Journal) claimLeader(ctx context.Context) error {
	info, err := j.stream.Info(ctx)
	if err != nil {
		return err
	}
	c := info.Cluster
	me := j.nc.ConnectedServerName()
	if c == nil || c.Leader == "" || c.Leader == me || len(c.Replicas) == 0 {
		return nil
	}
	peers := []string{c.Leader}
	current := false
	for _, r := range c.Replicas {
		peers = append(peers, r.Name)
		if r.Name == me {
			current = r.Current && !r.Offline
		}
	}
	slices.Sort(peers)
	if peers[j.opts.Partition%len(peers)] != me || !current {
		return nil
	}
	req, _ := json.Marshal(map[string]any{"placement": map[string]string{"preferred": me}})
	m, err := j.nc.RequestWithContext(ctx, "$JS.API.STREAM.LEADER.STEPDOWN."+j.opts.Stream, req)
	if err != nil {
		return fmt.Errorf("step down %s's leader %s for %s: %w", j.opts.Stream, c.Leader, me, err)
	}
	var resp struct {
		Error *jetstream.APIError `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return fmt.Errorf("step down %s's leader: %w", j.opts.Stream, err)
	}
	if resp.Error != nil {
		return fmt.Errorf("step down %s's leader %s for %s: %s", j.opts.Stream, c.Leader, me, resp.Error.Description)
	}
	j.log.Info("journal: this node leads its partition's stream now", "stream", j.opts.Stream, "was", c.Leader)
	return nil
}

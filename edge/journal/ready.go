package journal

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Readiness. An edge that cannot reach the log cannot store a publish
// (it answers unavailable after the publish timeout), and its replica
// falls behind the log: a load balancer should send its clients
// elsewhere. The watchdog asks the stream for its state every second
// (watchEvery); its answers say whether the edge reaches the stream's
// leader and how far the feed is behind. Ready reports not ready when:
//
//   - no look at the stream succeeded for readyNoLeader (the stream's
//     leader answers it: a cut edge, a leaderless stream), or the last
//     answer named no leader, and JetStream acknowledged none of this
//     edge's publishes meanwhile (its leader stored them: under load a
//     look can take longer than the watchdog waits while publishes
//     work, and readiness flickered);
//   - the feed has been more than readyMaxLag messages behind the
//     stream's last sequence, as the looks found it, for readyNoLeader.
//
// A few seconds (5 s, under the 20 s publish timeout and over the
// watchdog's 2 s wait for one answer) keep one lost answer or one burst
// from flapping readiness; an election after a leader's loss usually
// ends within them.
const (
	readyNoLeader = 5 * time.Second
	readyMaxLag   = 5000
)

// reach is what the watchdog's looks at the stream found.
type reach struct {
	// seen is when a look last found the stream with a leader, or
	// JetStream last acknowledged a publish (unix nanoseconds), or when
	// the journal opened; the watchdog and noteAck write it.
	seen atomic.Int64
	// behindSince is when the feed was first found more than
	// readyMaxLag behind, 0 while it is not; the watchdog writes it.
	behindSince atomic.Int64
	// lag is the feed's lag at the last look; the watchdog writes it.
	lag atomic.Uint64
}

// noteLook records a look at the stream: info, nil if none came.
// applied is what the feed had applied after the answer.
func (r *reach) noteLook(info *jetstream.StreamInfo, applied uint64, now time.Time) {
	if info == nil {
		return
	}
	if info.Cluster == nil || info.Cluster.Leader != "" {
		r.seen.Store(now.UnixNano())
	}
	lag := uint64(0)
	if info.State.LastSeq > applied {
		lag = info.State.LastSeq - applied
	}
	r.lag.Store(lag)
	switch {
	case lag <= readyMaxLag:
		r.behindSince.Store(0)
	case r.behindSince.Load() == 0:
		r.behindSince.Store(now.UnixNano())
	}
}

// noteAck records that JetStream acknowledged a publish at now: the
// stream's leader answered.
func (r *reach) noteAck(now time.Time) {
	for n := now.UnixNano(); ; {
		old := r.seen.Load()
		if old >= n || r.seen.CompareAndSwap(old, n) {
			return
		}
	}
}

// why says why the log is out of reach at now, or nil.
func (r *reach) why(now time.Time) error {
	if d := now.Sub(time.Unix(0, r.seen.Load())); d >= readyNoLeader {
		return fmt.Errorf("journal: no leader of the stream answered for %v", d.Round(time.Second))
	}
	if since := r.behindSince.Load(); since != 0 {
		if d := now.Sub(time.Unix(0, since)); d >= readyNoLeader {
			return fmt.Errorf("journal: the feed has been more than %d messages behind the stream for %v (%d now)",
				readyMaxLag, d.Round(time.Second), r.lag.Load())
		}
	}
	return nil
}

// Ready reports why the journal cannot serve, or nil: the stream is
// lost, NATS is unreachable, the feed has not caught up with the stream
// as it was when the edge started, or the log is out of reach (see
// readyNoLeader above).
func (j *Journal) Ready() error {
	if err := j.Lost(); err != nil {
		return err
	}
	if !j.nc.IsConnected() {
		return errors.New("journal: not connected to NATS")
	}
	select {
	case <-j.feed.caught:
	default:
		return errors.New("journal: replaying the stream")
	}
	return j.reach.why(time.Now())
}

package journal

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// reach says the log is out of reach once no look found a leader for
// readyNoLeader, or the feed stayed far behind for as long; not before.
func TestReachReadiness(t *testing.T) {
	t0 := time.Now()
	led := func(last uint64) *jetstream.StreamInfo {
		return &jetstream.StreamInfo{State: jetstream.StreamState{LastSeq: last}, Cluster: &jetstream.ClusterInfo{Leader: "n1"}}
	}
	leaderless := &jetstream.StreamInfo{Cluster: &jetstream.ClusterInfo{}}
	type look struct {
		at      time.Duration
		info    *jetstream.StreamInfo
		applied uint64
	}
	tests := []struct {
		name  string
		looks []look
		at    time.Duration
		want  string // a part of the reason; "" for ready
	}{
		{"answered", []look{{1 * time.Second, led(10), 10}}, 5 * time.Second, ""},
		{"one lost answer", []look{{1 * time.Second, led(10), 10}, {2 * time.Second, nil, 10}}, 5 * time.Second, ""},
		{"no answer", []look{{1 * time.Second, nil, 0}, {3 * time.Second, nil, 0}}, readyNoLeader, "no leader"},
		{"leaderless", []look{{1 * time.Second, leaderless, 0}, {4 * time.Second, leaderless, 0}}, 6 * time.Second, "no leader"},
		{"single node", []look{{4 * time.Second, &jetstream.StreamInfo{}, 0}}, 6 * time.Second, ""},
		{"a burst behind", []look{{1 * time.Second, led(20000), 10}, {2 * time.Second, led(20000), 19000}, {6 * time.Second, led(20000), 20000}}, 7 * time.Second, ""},
		{"stuck behind", []look{{1 * time.Second, led(20000), 10}, {4 * time.Second, led(20000), 10}, {6 * time.Second, led(20000), 10}}, 6 * time.Second, "behind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r reach
			r.seen.Store(t0.UnixNano())
			for _, l := range tt.looks {
				r.noteLook(l.info, l.applied, t0.Add(l.at))
			}
			err := r.why(t0.Add(tt.at))
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("not ready: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("readiness %v, want a reason with %q", err, tt.want)
			}
		})
	}
}

// A publish JetStream acknowledged is an answer of the stream's leader:
// under load a look can take longer than the watchdog waits while
// publishes work, and readiness must not flicker then. An old
// acknowledgment is no answer now.
func TestReachAcknowledged(t *testing.T) {
	t0 := time.Now()
	var r reach
	r.seen.Store(t0.UnixNano())
	r.noteLook(nil, 0, t0.Add(time.Second))
	r.noteAck(t0.Add(3 * time.Second))
	r.noteLook(nil, 0, t0.Add(4*time.Second))
	if err := r.why(t0.Add(6 * time.Second)); err != nil {
		t.Fatalf("looks lost, a publish acknowledged 3s ago: %v", err)
	}
	r.noteAck(t0.Add(2 * time.Second)) // a late note of an older one
	if err := r.why(t0.Add(8 * time.Second)); err == nil || !strings.Contains(err.Error(), "no leader") {
		t.Fatalf("no answer for 5s: %v, want no leader", err)
	}
}

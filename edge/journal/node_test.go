package journal_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
)

// TestStartNodeReportsTakenPort: a cluster port another process holds
// fails the start with the listener's error, not with a timeout that
// leaves the operator guessing.
func TestStartNodeReportsTakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	n, err := journal.StartNode(&journal.NodeOptions{
		DataDir: t.TempDir(), ClusterName: "taken", ClusterListen: ln.Addr().String(),
		Routes: []string{"nats-route://" + ln.Addr().String()}, Logger: journaltest.Logger(),
	})
	if err == nil {
		n.Close()
		t.Fatal("a node started on a cluster port that was taken")
	}
	if !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("error %q does not say the port is taken", err)
	}
}

// TestStartNodeSync: the node's JetStream syncs as NodeOptions say, as
// its monitoring reports it (varz, what `nats server info` shows): after
// every write with SyncAlways, else every SyncInterval, NATS's 2 minutes
// when it is 0. A negative interval is refused.
func TestStartNodeSync(t *testing.T) {
	for _, tc := range []struct {
		name     string
		always   bool
		interval time.Duration
		want     time.Duration // the interval reported
	}{
		{"default", false, 0, 2 * time.Minute},
		{"interval", false, 5 * time.Second, 5 * time.Second},
		{"always", true, 0, 2 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := journal.StartNode(&journal.NodeOptions{
				DataDir: t.TempDir(), Logger: journaltest.Logger(), SyncAlways: tc.always, SyncInterval: tc.interval,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			v, err := n.Server().Varz(nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.JetStream.Config; got == nil || got.SyncAlways != tc.always || got.SyncInterval != tc.want {
				t.Fatalf("varz jetstream config %+v, want sync_always %v, sync_interval %v", got, tc.always, tc.want)
			}
		})
	}
	n, err := journal.StartNode(&journal.NodeOptions{DataDir: t.TempDir(), Logger: journaltest.Logger(), SyncInterval: -time.Second})
	if err == nil {
		n.Close()
		t.Fatal("a node started with a negative sync interval")
	}
}

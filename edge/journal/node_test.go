package journal_test

import (
	"net"
	"strings"
	"testing"

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

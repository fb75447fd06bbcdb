package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/cmd/sluice/edgecmd/edgecmdtest"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/wasm/client"
)

// TestDurableEdgeStopsWhenItsStreamIsDeleted: an operator deletes the
// stream under a running durable edge (and a new one appears, with
// sequences from 1). The edge cannot go on: its positions belong to the
// old stream. It drains (its clients are closed, to reconnect elsewhere)
// and exits non-zero, saying why, so that systemd restarts it on the new
// stream. In a log of partitions the stream is the channel's
// partition's: losing it alone stops the edge the same way.
func TestDurableEdgeStopsWhenItsStreamIsDeleted(t *testing.T) {
	t.Parallel()
	forPartitions(t, testDurableEdgeStopsWhenItsStreamIsDeleted)
}

func testDurableEdgeStopsWhenItsStreamIsDeleted(t *testing.T, partitions int) {
	dir := t.TempDir()
	natsPort := journaltest.FreePorts(t, 1)[0]
	cfg := edgecmdtest.WriteConfig(t, fmt.Sprintf("cluster:\n  client_listen: 127.0.0.1:%d\n  partitions: %d\n"+
		"limits:\n  shutdown_timeout: 2s\n", natsPort, partitions))
	e := waitReady(t, launchEdge(t, "--listen", "127.0.0.1:0", "--config", cfg,
		"--data-dir", filepath.Join(dir, "data")))
	var states stateLog
	c := dial(t, e.url, client.Options{AppKey: e.appkey, OnState: states.on})
	publishRange(t, c, "room", 1, 3)

	nc, err := nats.Connect(fmt.Sprintf("nats://127.0.0.1:%d", natsPort))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream := streamOf("room", partitions)
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	conf := s.CachedInfo().Config
	// nats-server removes the account's streams directory in the
	// background once its last stream is deleted, racing the creation
	// below: a second stream keeps it from being empty.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "KEEP", Subjects: []string{"keep.>"}}); err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteStream(ctx, stream); err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, conf); err != nil {
		t.Fatal(err)
	}

	if code := e.exitCode(t, 30*time.Second); code == 0 {
		t.Fatalf("the edge exited 0 after losing its stream\n%s", e.stderr.String())
	}
	// The edge may see the deletion before the re-creation (its consumer
	// is deleted with the stream, which starts a check at once) or both;
	// either way it names the stream it lost.
	out := e.stderr.String()
	if !strings.Contains(out, stream+" was deleted and created again") && !strings.Contains(out, stream+" was deleted while this edge served it") {
		t.Fatalf("the edge's output does not say why it stopped (stream %s):\n%s", stream, out)
	}
	poll.Until(t, "the client to see its edge go", func() bool {
		return slices.Contains(states.get(), client.Disconnected)
	})
}

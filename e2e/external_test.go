package e2e

// An edge on an external NATS (nats.urls, `sluice edge --nats URL`), the
// production layout: NATS goes away and comes back.

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
	"github.com/sluicehq/sluice/wasm/client"
)

// startNATS runs a NATS server with JetStream on 127.0.0.1:port (one of
// journaltest.FreePorts) with its files in dir, in this process, as an
// operator's NATS would run beside the edges.
func startNATS(t *testing.T, port int, dir string) *server.Server {
	t.Helper()
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatalf("NATS not ready on 127.0.0.1:%d within 10s", port)
	}
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	return ns
}

// With its NATS gone, an edge refuses publishes with "unavailable" (no
// false ok) and keeps its connections and subscriptions; once NATS is
// back, publishing and delivery resume, and what was stored before is
// still there.
func TestExternalNATSOutage(t *testing.T) {
	t.Parallel()
	// A port below the ephemeral range: one the kernel handed out could be
	// taken, while NATS is down, as the local port of one of the other
	// tests' connections, and NATS could not listen there again.
	dir, port := t.TempDir(), journaltest.FreePorts(t, 1)[0]
	ns := startNATS(t, port, dir)
	url := ns.ClientURL()
	e := startCmdEdge(t, "cluster:\n  publish_timeout: 1s\nnats:\n  urls: ["+url+"]\n")
	sub := subscribeFrom(t, e.url, "ext", nil)
	pub := dial(t, e.url, client.Options{AppKey: "demo"})
	before, err := pub.Publish(ctxFor(t), "ext", 1)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, "the first message", func() bool { return sub.has(1) })

	ns.Shutdown()
	ns.WaitForShutdown()
	_, err = pub.Publish(ctxFor(t), "ext", 2)
	if code := codeOf(err); code != rtm.CodeUnavailable {
		t.Fatalf("publish with NATS gone: %v (code %q), want unavailable", err, code)
	}
	// The reason says whether it may have been stored: NATS's client
	// buffers what is published while it reconnects, and sends it once
	// NATS is back; the edge, still resolving its fate by Msg-Id, then
	// stores it once. Told "will not", it must never be stored.
	mayStore := strings.Contains(err.Error(), "may have been stored")
	if !mayStore && !strings.Contains(err.Error(), "will not") {
		t.Fatalf("publish with NATS gone: %v, want a reason saying whether it may have been stored", err)
	}

	startNATS(t, port, dir) // the same address and files: an operator's restart
	// The edge reconnects by itself; publishes then succeed again.
	var pos rtm.Position
	poll.Until(t, "a publish after NATS came back", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		pos, err = pub.Publish(ctx, "ext", 3)
		return err == nil
	})
	if pos.Epoch != before.Epoch || pos.Offset <= before.Offset {
		t.Fatalf("position after the outage %v does not follow %v in the same history", pos, before)
	}
	poll.Until(t, "the subscriber to get the message published after the outage", func() bool { return sub.has(3) })
	v, at, err := pub.Read(ctxFor(t), "ext", client.AtPosition(before))
	if err != nil || at != before || v != int64(1) {
		t.Fatalf("read of the message stored before the outage = %v at %v (%v)", v, at, err)
	}
	// A publish told "not stored" was not stored behind the client's
	// back; one told "may have been" is there once or not at all.
	got, _ := sub.snapshot()
	if !slices.Equal(got, []int{1, 3}) && !(mayStore && slices.Equal(got, []int{1, 2, 3})) {
		t.Fatalf("subscriber got %v, want [1 3]%s", got, map[bool]string{true: " or [1 2 3] (it may have been stored)"}[mayStore])
	}
}

// With its NATS gone, an edge cannot read the log to judge a position,
// so it refuses a resubscription there with "unavailable" (try again).
// The client keeps the subscription and tries again; once NATS is back
// it resumes where it was: every message once, in order, no OnError.
func TestResubscribeDuringNATSOutage(t *testing.T) {
	t.Parallel()
	dir, port := t.TempDir(), journaltest.FreePorts(t, 1)[0] // see TestExternalNATSOutage
	ns := startNATS(t, port, dir)
	e := startCmdEdge(t, "cluster:\n  publish_timeout: 1s\nnats:\n  urls: ["+ns.ClientURL()+"]\n")
	logs := &logRecorder{}
	sc := dial(t, e.url, client.Options{AppKey: "demo", Logger: logs.logger()})
	col := &collector{}
	errs := make(chan error, 1)
	sub, err := sc.Subscribe(ctxFor(t), "outage", &client.SubscribeOptions{OnError: func(err error) { errs <- err }}, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	pub := dial(t, e.url, client.Options{AppKey: "demo"})
	before := startPublishing(pub, "outage", 1, 5, nil)
	<-before.done
	poll.Until(t, "the messages before the outage", func() bool { return col.has(5) })

	ns.Shutdown()
	ns.WaitForShutdown()
	sc.Suspend() // a connection lost: Resume resubscribes from the position
	sc.Resume()
	poll.Until(t, "the edge to refuse the resubscription for now", func() bool {
		return logs.contains("resubscribe refused for now")
	})
	select {
	case err := <-errs:
		t.Fatalf("the subscription ended: %v", err)
	default:
	}

	startNATS(t, port, dir)
	after := startPublishing(pub, "outage", 100, 5, nil) // a publish fails until the edge has NATS again
	<-after.done
	acks := append(slices.Clone(before.acks), after.acks...)
	poll.Until(t, "the messages after the outage", func() bool { return col.has(acks[len(acks)-1].n) })
	got, _ := col.snapshot()
	checkDelivered(t, "subscriber across the outage", acks, got)
	if err := sub.Err(); err != nil {
		t.Fatalf("the subscription ended: %v", err)
	}
}

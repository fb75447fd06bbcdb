package server_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/internal/poll"
)

// logWriter writes to an edge's stream as another edge would, behind its
// back: the tests below make the states a purge on another edge goes
// through, one at a time.
type logWriter struct {
	t      *testing.T
	stream jetstream.Stream
	js     jetstream.JetStream
}

func newLogWriter(t *testing.T, n *journal.Node) *logWriter {
	t.Helper()
	nc, err := n.Connect(t.Name() + "-writer")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, journal.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	return &logWriter{t: t, stream: st, js: js}
}

// mark publishes a purge marker of the test app's channel ch up to
// offset through (journal's purge.go: "<subject>.purge"), as another
// edge's purge does first.
func (w *logWriter) mark(ch string, through uint64) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	subj := journal.Subject("test\x00"+ch) + ".purge"
	if _, err := w.js.Publish(ctx, subj, strconv.AppendUint(nil, through, 10)); err != nil {
		w.t.Fatal(err)
	}
}

// purge purges ch's messages up to offset through from the stream, as
// another edge's purge does second.
func (w *logWriter) purge(ch string, through uint64) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := w.stream.Purge(ctx, jetstream.WithPurgeSubject(journal.Subject("test\x00"+ch)), jetstream.WithPurgeSequence(through+1))
	if err != nil {
		w.t.Fatal(err)
	}
}

// Between another edge's purge marker and its purge of the stream, the
// stream still holds the purged messages: a history subscribe that asks
// the log for what the edge no longer holds starts after the purge, and
// does not get them (it did, from the log).
func TestJournalHistoryAfterPurgeMarker(t *testing.T) {
	n := startNode(t)
	e := startJournalEdge(t, n, nil)
	w := newLogWriter(t, n)
	c := e.dial(t, "test", "")
	pos := c.expectOK("rtm/publish", 1, map[string]any{"channel": "h", "message": "purged"})["position"].(string)
	w.mark("h", offsetOf(t, pos))
	poll.UntilNil(t, "the edge to apply the marker", func() error {
		if p := c.request("rtm/read", 2, map[string]any{"channel": "h", "position": pos}); p.Body["error"] != "expired_position" {
			return fmt.Errorf("a read of the purged position: %s %v", p.Action, p.Body)
		}
		return nil
	})
	c.expectOK("rtm/subscribe", 3, map[string]any{"channel": "h", "history": map[string]any{"count": 5}})
	c.send("rtm/publish", 4, map[string]any{"channel": "h", "message": "end"})
	if got := recvUntilEnd(c, "h"); fmt.Sprint(got) != "[end]" {
		t.Fatalf("a history after the purge marker delivered %v, want [end] alone", got)
	}
}

// An edge whose log holds nothing more of a channel to purge (another
// edge's purge dropped it) answers a purge only once its own store has
// applied that purge, as after a purge of its own: a read of a purged
// position there then says it expired. Here a sole writer's store takes
// a second to apply what another writer put in its stream.
func TestJournalPurgeOfNothingWaitsForTheStore(t *testing.T) {
	n := startNode(t)
	e := startJournalEdge(t, n, &journal.Options{SoleWriter: true})
	w := newLogWriter(t, n)
	c := e.dial(t, "test", "")
	pos := c.expectOK("rtm/publish", 1, map[string]any{"channel": "p", "message": "purged"})["position"].(string)
	w.mark("p", offsetOf(t, pos))
	w.purge("p", offsetOf(t, pos))
	c.expectOK("rtm/delete", 2, map[string]any{"channel": "p", "purge": true})
	c.expectError("rtm/read", 3, map[string]any{"channel": "p", "position": pos}, "expired_position")
}

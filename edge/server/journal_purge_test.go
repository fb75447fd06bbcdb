package server_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/app"
	"github.com/sluicehq/sluice/edge/chanlog"
	"github.com/sluicehq/sluice/edge/journal"
	"github.com/sluicehq/sluice/edge/journal/journaltest"
	"github.com/sluicehq/sluice/edge/server"
	"github.com/sluicehq/sluice/edge/server/servertest"
	"github.com/sluicehq/sluice/edge/store"
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

// purgeOnNext is a journal that runs purge before the first Next, the
// read a history's catch-up from the log makes: a purge between the
// history's start and its catch-up.
type purgeOnNext struct {
	*journal.Journal
	once  sync.Once
	purge func()
}

func (p *purgeOnNext) Next(ctx context.Context, key string, from uint64, n, maxBytes int) ([]store.Frame, uint64, error) {
	p.once.Do(p.purge)
	return p.Journal.Next(ctx, key, from, n, maxBytes)
}

// A history the edge reads from the log (it holds none of it) is purged
// from the log between its start and its catch-up: the catch-up finds
// nothing and hands over to the edge's cursor, after the purge. The
// subscription is out of sync, not silently on with the next message.
func TestJournalCatchUpPurged(t *testing.T) {
	n := startNode(t)
	a := startJournalEdge(t, n, nil)
	pa := a.dial(t, "test", "")
	var last string
	for i := range 5 {
		last = pa.expectOK("rtm/publish", i+1, map[string]any{"channel": "room", "message": i})["position"].(string)
	}
	w := newLogWriter(t, n)
	j := &purgeOnNext{Journal: journaltest.Open(t, n, &journal.Options{Replay: time.Nanosecond}), purge: func() {
		w.mark("room", offsetOf(t, last))
		w.purge("room", offsetOf(t, last))
	}}
	b := servertest.Start(t, &server.Options{Apps: []*app.App{testApp()}, Journals: []chanlog.Journal{j}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := j.Start(ctx, b.Server.Store()); err != nil {
		t.Fatal(err)
	}
	poll.UntilNil(t, "the second edge's feed to catch up", j.Ready)
	c := (&edge{srv: b.Server, url: b.URL}).dial(t, "test", "")
	c.expectOK("rtm/subscribe", 1, map[string]any{"channel": "room", "history": map[string]any{"count": 5}})
	pa.expectOK("rtm/publish", 6, map[string]any{"channel": "room", "message": "end"})
	if p := c.recv(); p.Action != "rtm/subscription/error" || p.Body["error"] != "out_of_sync" {
		t.Fatalf("a history purged before its catch-up: %s %v, want out_of_sync", p.Action, p.Body)
	}
}

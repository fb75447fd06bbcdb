package journal

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// recreateStream deletes j's stream and creates it again (a new epoch,
// whose sequences restart at 1), as an operator's nats CLI would.
func recreateStream(t *testing.T, ctx context.Context, j *Journal) {
	t.Helper()
	cfg := j.stream.CachedInfo().Config
	// nats-server removes the account's streams directory in the
	// background once its last stream is deleted, racing the creation
	// below ("could not create storage directory"): a second stream keeps
	// it from being empty.
	keep := jetstream.StreamConfig{Name: "KEEP", Subjects: []string{"keep.>"}}
	if _, err := j.js.CreateStream(ctx, keep); err != nil {
		t.Fatal(err)
	}
	if err := j.js.DeleteStream(ctx, cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := j.js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
}

// lostJournal opens a journal whose watchdog never ticks within a test,
// on a stream holding before messages of key, and returns it with the
// channel OnLost reports to.
func lostJournal(t *testing.T, key string, before int, sole bool) (*Journal, *storeView, chan error) {
	t.Helper()
	lost := make(chan error, 2)
	j, st := open(t, node(t, ""), &Options{watchEvery: time.Hour, SoleWriter: sole, OnLost: func(err error) { lost <- err }})
	v := &storeView{j: j, st: st, key: key}
	for i := range before {
		v.want = append(v.want, publish(t, j, key, fmt.Sprintf("old %d", i)))
	}
	return j, v, lost
}

// storeView checks what the replica holds of one channel.
type storeView struct {
	j    *Journal
	st   *store.Store
	key  string
	want []uint64 // the offsets of the old stream's messages
}

// holdsOnlyTheOld fails t unless the replica holds exactly the old
// stream's messages of the channel, with their old data.
func (v *storeView) holdsOnlyTheOld(t *testing.T) {
	t.Helper()
	last := v.want[len(v.want)-1]
	if a := v.st.Applied(0); a != last {
		t.Errorf("the replica applied up to %d, want %d: it took messages of the new stream", a, last)
	}
	for i, off := range v.want {
		f, found, err := v.st.Read(v.key, &rtm.Position{Epoch: v.j.Epoch(), Offset: off})
		if err != nil || !found || f.Offset != off || string(f.Data) != fmt.Sprintf("old %d", i) {
			t.Errorf("the replica at %d holds %q at %d (%v, %v), want %q", off, f.Data, f.Offset, found, err, fmt.Sprintf("old %d", i))
		}
	}
	if f, found, err := v.st.Read(v.key, nil); err != nil || !found || f.Offset != last {
		t.Errorf("the replica's newest is %q at %d (%v, %v), want the old stream's last, at %d", f.Data, f.Offset, found, err, last)
	}
}

// waitLost waits until the journal reports its stream lost.
func waitLost(t *testing.T, ctx context.Context, lost <-chan error) {
	t.Helper()
	select {
	case err := <-lost:
		if !errors.Is(err, ErrStreamLost) {
			t.Fatalf("OnLost(%v), want an ErrStreamLost", err)
		}
	case <-ctx.Done():
		t.Fatal("the journal did not notice that its stream was created again")
	}
}

// TestRecreatedStreamAcksNothingAtOldPositions: after the stream is
// deleted and created again, and before the watchdog's next look at it,
// the edge's publishes are stored in the new stream at sequences that
// restart at 1: some at or below what the replica already applied (its
// acknowledgment must not pass for the old stream's message there),
// some above (the ordered consumer, recreated on the new stream, must
// not apply them as the old stream's). None is acknowledged: each fails
// as unavailable, the loss is reported at once, and the replica keeps
// the old stream's messages only. The same holds of a sole writer
// (which appends its acknowledged publishes itself): the first
// acknowledgment at a sequence it holds another message at sends it
// back to the consumer.
func TestRecreatedStreamAcksNothingAtOldPositions(t *testing.T) {
	for _, sole := range []bool{false, true} {
		t.Run(fmt.Sprintf("sole=%v", sole), func(t *testing.T) {
			t.Parallel()
			recreatedStreamAcksNothing(t, sole)
		})
	}
}

func recreatedStreamAcksNothing(t *testing.T, sole bool) {
	const key = "app\x00room"
	j, v, lost := lostJournal(t, key, 4, sole)
	if own := j.Stats().Own; sole && own != 4 {
		t.Fatalf("the sole writer appended %d of its 4 publishes itself", own)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recreateStream(t, ctx, j)
	type result struct {
		i   int
		seq uint64
		err error
	}
	const n = 8 // sequences 1..8 of the new stream: 1..4 the replica holds (old), 5..8 it does not
	results := make(chan result, n)
	for i := range n {
		j.Publish(key, fmt.Appendf(nil, "new %d", i), func(seq uint64, err error) { results <- result{i, seq, err} })
	}
	for range n {
		select {
		case r := <-results:
			if r.err == nil {
				t.Errorf("publish %d to the new stream acknowledged at %d:%d, a position of the old one", r.i, j.Epoch(), r.seq)
			} else if !errors.Is(r.err, ErrUnavailable) {
				t.Errorf("publish %d to the new stream: %v, want unavailable", r.i, r.err)
			}
		case <-ctx.Done():
			t.Fatal("publishes to the new stream unanswered")
		}
	}
	waitLost(t, ctx, lost)
	v.holdsOnlyTheOld(t)
}

// TestRecreatedStreamIsNotFedIntoTheReplica: another writer fills the
// re-created stream past what the replica applied; the feed's consumer,
// which nats.go recreates on the new stream after the old one's last
// sequence, brings its messages, and the feed checks the stream before
// it applies the first message of any new consumer: the loss is
// reported without waiting for the watchdog, and nothing of the new
// stream reaches the replica.
func TestRecreatedStreamIsNotFedIntoTheReplica(t *testing.T) {
	t.Parallel()
	const key = "app\x00feed"
	j, v, lost := lostJournal(t, key, 3, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	recreateStream(t, ctx, j)
	for i := range 10 {
		if _, err := j.js.Publish(ctx, Subject(key), fmt.Appendf(nil, "other %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitLost(t, ctx, lost)
	v.holdsOnlyTheOld(t)
}

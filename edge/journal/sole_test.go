package journal

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/shared/rtm"
)

// acked is one acknowledged publish.
type acked struct {
	key, data string
	seq       uint64
}

// publishAll publishes n messages over channels channels, all in flight
// at once, and returns them acknowledged, in publish order.
func publishAll(t *testing.T, j *Journal, prefix string, n, channels int) []acked {
	t.Helper()
	out := make([]acked, n)
	errs := make(chan error, n)
	for i := range n {
		out[i] = acked{key: fmt.Sprintf("app\x00%s%d", prefix, i%channels), data: fmt.Sprintf("%s %d", prefix, i)}
		j.Publish(out[i].key, []byte(out[i].data), func(seq uint64, err error) {
			out[i].seq = seq
			errs <- err
		})
	}
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("publishes unanswered")
		}
	}
	return out
}

// holds fails t unless st holds every message of ms at its position, and
// the stream holds it at the same sequence: the positions a sole writer
// gives are the log's.
func holds(t *testing.T, j *Journal, st *store.Store, ms []acked) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range ms {
		f, found, err := st.Read(m.key, &rtm.Position{Epoch: j.Epoch(), Offset: m.seq})
		if err != nil || !found || f.Offset != m.seq || string(f.Data) != m.data {
			t.Fatalf("the store at %d holds %q at %d (%v, %v), want %q", m.seq, f.Data, f.Offset, found, err, m.data)
		}
		fs, _, err := j.Next(ctx, m.key, m.seq, 1, 0)
		if err != nil || len(fs) != 1 || fs[0].Offset != m.seq || string(fs[0].Data) != m.data {
			t.Fatalf("the stream's %q from %d: %v (%v), want %q at %d", m.key, m.seq, fs, err, m.data, m.seq)
		}
	}
}

// TestSoleWriterAppendsItsOwnPublishes: a sole writer appends its
// acknowledged publishes to the store itself, at the sequences the
// stream gave them, in order; a restart (which replays the stream
// through a consumer) finds the same messages at the same positions.
func TestSoleWriterAppendsItsOwnPublishes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := node(t, dir)
	j, st := open(t, n, &Options{SoleWriter: true})
	ms := publishAll(t, j, "ch", 600, 37)
	seen := map[uint64]bool{}
	for _, m := range ms {
		if m.seq == 0 || m.seq > uint64(len(ms)) || seen[m.seq] {
			t.Fatalf("publish %q acknowledged at %d (of %d, seen before: %v)", m.data, m.seq, len(ms), seen[m.seq])
		}
		seen[m.seq] = true
	}
	holds(t, j, st, ms)
	if s := j.Stats(); s.Own != uint64(len(ms)) || s.SoleFallbacks != 0 || s.Applied != uint64(len(ms)) {
		t.Fatalf("stats %+v: want all %d publishes appended by the sole writer, no fallback", s, len(ms))
	}
	j.Close()
	n.Close()

	j2, st2 := open(t, node(t, dir), &Options{SoleWriter: true})
	holds(t, j2, st2, ms)
	if s := j2.Stats(); s.Own != 0 || s.Applied != uint64(len(ms)) {
		t.Fatalf("after the restart: stats %+v, want the %d messages replayed from the stream", s, len(ms))
	}
	more := publishAll(t, j2, "after", 100, 7)
	holds(t, j2, st2, more)
	if s := j2.Stats(); s.Own != uint64(len(more)) {
		t.Fatalf("after the replay the sole writer appended %d of %d publishes itself", s.Own, len(more))
	}
}

// TestSoleWriterFallsBackWhenNotAlone: a message the sole writer did not
// publish (another writer after all) leaves a gap before its next
// acknowledgment, which does not fill; the feed reads the stream again
// from the gap, so the store holds both messages in the stream's order
// and the publish is acknowledged at its sequence; once caught up, the
// feed is a sole writer again.
func TestSoleWriterFallsBackWhenNotAlone(t *testing.T) {
	t.Parallel()
	j, st := open(t, node(t, ""), &Options{SoleWriter: true})
	before := publishAll(t, j, "mine", 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other := acked{key: "app\x00mine0", data: "not mine"}
	ack, err := j.js.Publish(ctx, Subject(other.key), []byte(other.data))
	if err != nil {
		t.Fatal(err)
	}
	other.seq = ack.Sequence
	// The next publish waits past the gap (at least soleGapWait), and is
	// counted as lag meanwhile.
	after := []acked{{key: "app\x00mine0", data: "mine after"}}
	type result struct {
		seq uint64
		err error
	}
	res := make(chan result, 1)
	j.Publish(after[0].key, []byte(after[0].data), func(seq uint64, err error) { res <- result{seq, err} })
	for j.Stats().Lag != 1 {
		select {
		case <-res:
			t.Fatal("the publish past the gap was answered before it was counted as lag")
		case <-ctx.Done():
			t.Fatal("the publish past the gap was never counted as lag")
		case <-time.After(2 * time.Millisecond):
		}
	}
	select {
	case r := <-res:
		if r.err != nil {
			t.Fatalf("the publish past the gap: %v", r.err)
		}
		after[0].seq = r.seq
	case <-ctx.Done():
		t.Fatal("the publish past the gap was never answered")
	}
	if after[0].seq != other.seq+1 {
		t.Fatalf("the publish after the other writer's (at %d) was acknowledged at %d", other.seq, after[0].seq)
	}
	all := append(append(before, other), after...)
	holds(t, j, st, all)
	if f, found, err := st.Read(other.key, nil); err != nil || !found || f.Offset != after[0].seq {
		t.Fatalf("the channel's newest is at %d (%v, %v), want %d", f.Offset, found, err, after[0].seq)
	}
	s := j.Stats()
	if s.SoleFallbacks != 1 || s.Own != uint64(len(before)) {
		t.Fatalf("stats %+v: want 1 fallback, %d appended by the sole writer", s, len(before))
	}
	again := publishAll(t, j, "again", 50, 5)
	holds(t, j, st, again)
	if s2 := j.Stats(); s2.Own != s.Own+uint64(len(again)) || s2.SoleFallbacks != 1 {
		t.Fatalf("stats %+v after catching up: want the %d later publishes appended by the sole writer", s2, len(again))
	}
}

// publishID publishes with a Msg-Id and returns the sequence.
func publishID(t *testing.T, j *Journal, key, data, id string) uint64 {
	t.Helper()
	seq, err := answerOf(t, "publish "+data, func(done func(uint64, error)) { j.PublishID(key, []byte(data), id, done) })
	if err != nil {
		t.Fatalf("publish %q with Msg-Id %q: %v", data, id, err)
	}
	return seq
}

// TestPublishIDStoresOnce: a Msg-Id is stored once, whichever journal on
// the stream publishes it (the edges of a cluster), and its repeats are
// answered with the first one's sequence, by a feed that reads the
// stream and by a sole writer alike; an id of more than MaxMsgIDBytes is
// refused.
func TestPublishIDStoresOnce(t *testing.T) {
	for _, sole := range []bool{false, true} {
		t.Run(fmt.Sprintf("sole=%v", sole), func(t *testing.T) {
			t.Parallel()
			n := node(t, "")
			j, st := open(t, n, &Options{SoleWriter: sole})
			const key = "app\x00orders"
			first := publishID(t, j, key, "one", "order-17")
			if again := publishID(t, j, key, "one", "order-17"); again != first {
				t.Fatalf("the same Msg-Id again on the same journal: %d, want %d", again, first)
			}
			other := publishID(t, j, key, "two", "order-18")
			if other == first {
				t.Fatalf("another Msg-Id answered %d, the first's sequence", other)
			}
			if !sole {
				// Another edge on the stream: a sole writer has none.
				j2, _ := open(t, n, nil)
				if again := publishID(t, j2, key, "one", "order-17"); again != first {
					t.Fatalf("the same Msg-Id on another journal: %d, want %d", again, first)
				}
			}
			holds(t, j, st, []acked{{key, "one", first}, {key, "two", other}})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if fs, _, err := j.Next(ctx, key, 1, 10, 0); err != nil || len(fs) != 2 {
				t.Fatalf("the stream holds %d messages of the channel (%v), want 2", len(fs), err)
			}
			errs := make(chan error, 1)
			j.PublishID(key, []byte("x"), strings.Repeat("i", MaxMsgIDBytes+1), func(_ uint64, err error) { errs <- err })
			if err := <-errs; err == nil {
				t.Fatal("a Msg-Id past MaxMsgIDBytes was accepted")
			}
		})
	}
}

// TestSoleWriterReadsWhatItDidNotWrite: a message another writer stores
// after the sole writer's last publish leaves no acknowledgment behind
// it to show the gap; the watchdog sees the stream ahead of the store
// and reads it through a consumer, so the message is not lost, and the
// feed is a sole writer again after.
func TestSoleWriterReadsWhatItDidNotWrite(t *testing.T) {
	t.Parallel()
	j, st := open(t, node(t, ""), &Options{SoleWriter: true})
	mine := publishAll(t, j, "tail", 2, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	other := acked{key: "app\x00tail0", data: "not mine"}
	ack, err := j.js.Publish(ctx, Subject(other.key), []byte(other.data))
	if err != nil {
		t.Fatal(err)
	}
	other.seq = ack.Sequence
	for {
		if f, found, err := st.Read(other.key, nil); err == nil && found && f.Offset == other.seq {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the store never got the other writer's message at %d", other.seq)
		case <-time.After(20 * time.Millisecond):
		}
	}
	holds(t, j, st, append(mine, other))
	own := j.Stats().Own
	more := publishAll(t, j, "tail", 3, 1)
	holds(t, j, st, more)
	if s := j.Stats(); s.Own != own+uint64(len(more)) || s.FeedRestarts != 1 {
		t.Fatalf("stats %+v: want one consumer started, then the %d later publishes appended by the sole writer", s, len(more))
	}
}

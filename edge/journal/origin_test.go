package journal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
)

// publishFrom publishes synchronously from origin and returns the
// sequence.
func publishFrom(t *testing.T, j *Journal, key, data, origin string) uint64 {
	t.Helper()
	seq, err := answerOf(t, "publish "+data, func(done func(uint64, error)) {
		j.PublishFrom(context.Background(), key, []byte(data), "", origin, done)
	})
	if err != nil {
		t.Fatalf("publish %q: %v", data, err)
	}
	return seq
}

// answerOf calls send with a done function and returns what it is called
// with, failing t if that takes 30 s.
func answerOf(t *testing.T, what string, send func(done func(uint64, error))) (uint64, error) {
	t.Helper()
	type res struct {
		seq uint64
		err error
	}
	c := make(chan res, 1)
	send(func(seq uint64, err error) { c <- res{seq, err} })
	select {
	case r := <-c:
		return r.seq, r.err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: no answer", what)
	}
	return 0, nil
}

// forEachFeed runs f, in parallel, for a journal fed by its consumer and
// for a sole writer, which appends its own acknowledged publishes.
func forEachFeed(t *testing.T, f func(t *testing.T, sole bool)) {
	for _, sole := range []bool{false, true} {
		name := "consumer"
		if sole {
			name = "sole writer"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, sole)
		})
	}
}

// TestOriginTravels: a message's origin reaches the replica of the edge
// that published it (through the consumer, or appended by a sole
// writer), the replica of another edge, which only the consumer feeds,
// and the frames a catch-up reads from the log; a message without one
// has none anywhere.
// wantFrame is a frame a test expects the store or the log to give.
type wantFrame struct {
	seq          uint64
	data, origin string // origin "": the frame has none (Origin nil)
}

// checkFrames fails t unless fs are want's frames, in order.
func checkFrames(t *testing.T, what string, fs []store.Frame, want []wantFrame) {
	t.Helper()
	if len(fs) != len(want) {
		t.Fatalf("%s: %d frames, want %d", what, len(fs), len(want))
	}
	for i, f := range fs {
		w := want[i]
		if f.Offset != w.seq || string(f.Data) != w.data || string(f.Origin) != w.origin || (w.origin == "") != (f.Origin == nil) {
			t.Errorf("%s: frame %d = %d %.12q… from %q, want %d %.12q… from %q", what, i, f.Offset, f.Data, f.Origin, w.seq, w.data, w.origin)
		}
	}
}

// replicaFrames returns the newest n messages of key in the replica st.
func replicaFrames(t *testing.T, st *store.Store, key string, n int) []store.Frame {
	t.Helper()
	cur, err := st.Subscribe(key, store.Start{HistoryCount: n})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	fs, err := cur.Read(nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestOriginTravels(t *testing.T) {
	forEachFeed(t, func(t *testing.T, sole bool) {
		n := node(t, "")
		j, st := open(t, n, &Options{SoleWriter: sole})
		key := "demo\x00room"
		s1 := publishFrom(t, j, key, "one", "edge1.7")
		s2 := publishFrom(t, j, key, "two", "")
		if sole && j.Stats().Own == 0 {
			t.Fatal("the sole writer appended nothing itself")
		}
		_, other := open(t, n, nil)
		want := []wantFrame{{s1, "one", "edge1.7"}, {s2, "two", ""}}
		for _, r := range []struct {
			name string
			st   *store.Store
		}{{"this edge's replica", st}, {"another edge's replica", other}} {
			// the other edge's feed runs on its own
			poll.Until(t, r.name+" to apply the messages", func() bool { return r.st.Applied(0) >= s2 })
			checkFrames(t, r.name, replicaFrames(t, r.st, key, 10), want)
		}
		fs, _, err := j.Next(context.Background(), key, s1, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkFrames(t, "the log (Next)", fs, want)
	})
}

// TestOriginTooLong: an origin the store could not keep is refused
// before anything is sent to the log.
func TestOriginTooLong(t *testing.T) {
	t.Parallel()
	j, _ := open(t, node(t, ""), nil)
	done := make(chan error, 1)
	j.PublishFrom(context.Background(), "demo\x00room", []byte("x"), "", strings.Repeat("o", store.MaxOriginBytes+1), func(_ uint64, err error) { done <- err })
	if err := <-done; !errors.Is(err, store.ErrOriginTooLong) {
		t.Fatalf("publish with a long origin: %v, want store.ErrOriginTooLong", err)
	}
	if s := j.Stats(); s.Published != 0 {
		t.Fatalf("stats %+v: something was published", s)
	}
}

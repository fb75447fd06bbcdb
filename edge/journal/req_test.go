package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/poll"
)

// TestRecycledRequestIsBlank: a recycled request keeps its header map
// and a small buffer, and nothing of its message.
func TestRecycledRequestIsBlank(t *testing.T) {
	for _, tc := range []struct {
		name    string
		extra   map[string]string
		payload int
		keeps   bool // its buffer
	}{
		{"plain", nil, 100, true},
		{"origin and condition", map[string]string{OriginHeader: "o", "Nats-Expected-Last-Subject-Sequence": "7"}, 100, true},
		{"large payload", nil, maxPooledData + 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReq("sluice.a.b", "reply.1", "id.1", make([]byte, tc.payload))
			for k, v := range tc.extra {
				r.msg.Header.Set(k, v)
			}
			r.first, r.resent, r.done = r.first.Add(1), true, func(uint64, error) {}
			h := r.msg.Header
			r.recycle()
			if len(h) != 1 || len(h[msgIDHeader]) != 1 || h[msgIDHeader][0] != "" {
				t.Errorf("header after recycle: %v, want only an empty Msg-Id", h)
			}
			if r.msg.Subject != "" || r.msg.Reply != "" || len(r.msg.Data) != 0 || r.done != nil || r.resent || !r.first.IsZero() {
				t.Errorf("recycled request keeps its message: %+v", *r)
			}
			if kept := cap(r.msg.Data) > 0; kept != tc.keeps {
				t.Errorf("buffer kept: %v, want %v (cap %d)", kept, tc.keeps, cap(r.msg.Data))
			}
		})
	}
}

// TestReusedRequestsCarryNothingOver: publishes one after another (each
// one's request reused by the next) with and without an origin or a
// condition, large and empty payloads, each stored once, at its own
// sequence, with its own payload and origin: no header, Msg-Id or byte
// of an earlier publish reaches a later one.
func TestReusedRequestsCarryNothingOver(t *testing.T) {
	forEachFeed(t, func(t *testing.T, sole bool) {
		j, st := open(t, node(t, ""), &Options{SoleWriter: sole})
		key := "demo\x00reuse"
		var want []wantFrame
		var last uint64
		for i := range 40 {
			data := strings.Repeat(string(rune('a'+i%26)), []int{0, 3, maxPooledData + 10, 1, 200}[i%5])
			var m wantFrame
			switch i % 4 {
			case 0: // conditional, with an origin
				seq, err := publishExpect(t, j, key, data, "", "edge.1", last)
				if err != nil {
					t.Fatalf("publish %d (conditional on %d): %v", i, last, err)
				}
				m = wantFrame{seq, data, "edge.1"}
			case 1, 3:
				m = wantFrame{publish(t, j, key, data), data, ""}
			case 2:
				m = wantFrame{publishFrom(t, j, key, data, "edge.2"), data, "edge.2"}
			}
			if m.seq <= last {
				t.Fatalf("publish %d stored at %d, after %d: a Msg-Id carried over?", i, m.seq, last)
			}
			last = m.seq
			want = append(want, m)
		}
		poll.Until(t, "the store to apply them", func() bool { return st.Applied(0) >= last })
		checkFrames(t, "the replica", replicaFrames(t, st, key, 100), want)
		fs, _, err := j.Next(context.Background(), key, want[0].seq, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkFrames(t, "the log", fs, want)
	})
}

// TestSoleWriterReusesReplySubjects: a sole writer's publishes answered
// one after another share a reply subject, each stored once at its own
// sequence; a publish held in a recovery (its message lent to another
// send) does not give its subject back, nor does one that failed; the
// journal without SoleWriter gives each publish a subject of its own.
func TestSoleWriterReusesReplySubjects(t *testing.T) {
	t.Parallel()
	j, _ := open(t, node(t, ""), &Options{SoleWriter: true})
	p := &j.pub
	state := func() (minted uint64, free []string, inUse int) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.replies.minted, slices.Clone(p.replies.free), len(p.replies.tokOf)
	}
	var last uint64
	for i := range 20 {
		seq := publish(t, j, "demo\x00reply", fmt.Sprint("m", i))
		if seq <= last {
			t.Fatalf("publish %d stored at %d, after %d", i, seq, last)
		}
		last = seq
	}
	// Answered one by one: the first subject served them all.
	if minted, free, inUse := state(); minted != 1 || len(free) != 1 || inUse != 0 {
		t.Fatalf("after 20 publishes one at a time: %d subjects made, %v free, %d in use; want 1, one, 0", minted, free, inUse)
	}

	// A recovery holds the next publish; it is sent by the recovery's
	// end (a send of the retry loop), so its subject is not reused.
	p.recover()
	if seq := publish(t, j, "demo\x00reply", "held"); seq != last+1 {
		t.Fatalf("the held publish stored at %d, want %d", seq, last+1)
	}
	if minted, free, inUse := state(); minted != 1 || len(free) != 0 || inUse != 0 {
		t.Fatalf("after a held publish: %d subjects made, %v free, %d in use; want 1, none, 0", minted, free, inUse)
	}
	publish(t, j, "demo\x00reply", "next")
	if minted, free, _ := state(); minted != 2 || len(free) != 1 {
		t.Fatalf("after the next publish: %d subjects made, %v free; want 2, one", minted, free)
	}

	// One that fails (too large for NATS) gives nothing back either.
	c := make(chan error, 1)
	j.Publish("demo\x00reply", make([]byte, 9<<20), func(_ uint64, err error) { c <- err })
	if err := <-c; !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a 9 MiB publish: %v, want ErrTooLarge", err)
	}
	if _, free, inUse := state(); len(free) != 0 || inUse != 0 {
		t.Fatalf("after a failed publish: %v free, %d in use; want none, 0", free, inUse)
	}
}

// TestRepliesWithoutSoleWriterAreUnique: a journal that is not a sole
// writer makes no reusable subjects.
func TestRepliesWithoutSoleWriterAreUnique(t *testing.T) {
	t.Parallel()
	j, _ := open(t, node(t, ""), nil)
	for i := range 5 {
		publish(t, j, "demo\x00unique", fmt.Sprint("m", i))
	}
	j.pub.mu.Lock()
	defer j.pub.mu.Unlock()
	if rs := j.pub.replies; rs.minted != 0 || len(rs.free) != 0 || len(rs.tokOf) != 0 {
		t.Fatalf("replies of a journal that is no sole writer: %+v", rs)
	}
}

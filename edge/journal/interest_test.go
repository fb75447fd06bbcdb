package journal

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// interestPair opens two journals on one node: a publisher that follows
// nothing, and an edge fed by interest.
func interestPair(t *testing.T) (pub, edge *Journal, st *store.Store) {
	t.Helper()
	n := node(t, "")
	pub, _ = open(t, n, &Options{Interest: true})
	edge, st = open(t, n, &Options{Interest: true})
	return pub, edge, st
}

// followFor follows key for the test's life.
func followFor(t *testing.T, j *Journal, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	release, err := j.Follow(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
}

// followCut follows key and cuts its feed of the channel's messages, as
// a slow consumer or a lost leader would lose them; it returns the
// follow.
func followCut(t *testing.T, j *Journal, key string) *follow {
	t.Helper()
	followFor(t, j, key)
	j.interest.mu.Lock()
	defer j.interest.mu.Unlock()
	f := j.interest.fol[key]
	if err := f.subs[0].Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	return f
}

// held returns the offsets and payloads the store holds of key from
// position at on.
func held(t *testing.T, st *store.Store, key string, at rtm.Position) []string {
	t.Helper()
	cur, err := st.Subscribe(key, store.Start{Position: &at})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	var out []string
	for {
		fs, err := cur.Read(nil, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) == 0 {
			return out
		}
		for _, f := range fs {
			out = append(out, fmt.Sprintf("%d:%s", f.Offset, f.Data))
		}
	}
}

func TestInterestFeedBringsOnlyFollowedChannels(t *testing.T) {
	pub, edge, st := interestPair(t)
	const a, b = "app\x00followed", "app\x00other"
	before := publish(t, pub, a, "before")
	followFor(t, edge, a)
	want := []string{fmt.Sprintf("%d:before", before)} // within the replay window: preloaded
	for k := range 5 {
		seq := publish(t, pub, a, fmt.Sprint("m", k))
		want = append(want, fmt.Sprintf("%d:m%d", seq, k))
		publish(t, pub, b, fmt.Sprint("x", k))
	}
	last := publish(t, pub, a, "last")
	want = append(want, fmt.Sprintf("%d:last", last))
	poll.Within(t, 10*time.Second, "the follow to apply the last message", func() bool {
		applied, _ := edge.Applied(a)
		return applied >= last
	})
	if got := held(t, st, a, rtm.Position{Epoch: edge.Epoch(), Offset: before}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the store holds %v of the followed channel, want %v", got, want)
	}
	if st.Has(b) {
		t.Fatal("the store holds a channel nobody follows")
	}
	if got := edge.Stats().Stored; got != 7 {
		t.Fatalf("the edge stored %d messages, want the 7 of its channel", got)
	}
}

// Messages older than the replay window are not read as a follow
// starts: the log serves them.
func TestInterestFollowStartsAfterOldMessages(t *testing.T) {
	n := node(t, "")
	pub, _ := open(t, n, &Options{Interest: true})
	edge, st := open(t, n, &Options{Interest: true, Replay: time.Nanosecond})
	const key = "app\x00old"
	before := publish(t, pub, key, "before")
	followFor(t, edge, key)
	if _, err := st.Subscribe(key, store.Start{Position: &rtm.Position{Epoch: edge.Epoch(), Offset: before}}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("a position before the follow: %v, want expired (read from the log)", err)
	}
	next := publish(t, pub, key, "next")
	poll.Within(t, 10*time.Second, "the follow to apply the next message", func() bool {
		applied, _ := edge.Applied(key)
		return applied >= next
	})
	if got := held(t, st, key, rtm.Position{Epoch: edge.Epoch(), Offset: before + 1}); fmt.Sprint(got) != fmt.Sprint([]string{fmt.Sprintf("%d:next", next)}) {
		t.Fatalf("the store holds %v", got)
	}
}

func TestInterestFeedFillsAGap(t *testing.T) {
	pub, edge, st := interestPair(t)
	const key = "app\x00gappy"
	f := followCut(t, edge, key)
	var want []string
	for k := range 3 {
		seq := publish(t, pub, key, fmt.Sprint("lost", k))
		want = append(want, fmt.Sprintf("%d:lost%d", seq, k))
	}
	sub, err := edge.nc.ChanSubscribe(edge.feedSubject(Subject(key)), edge.interest.in)
	if err != nil {
		t.Fatal(err)
	}
	edge.interest.mu.Lock()
	f.subs[0] = sub
	edge.interest.mu.Unlock()
	if err := edge.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	seq := publish(t, pub, key, "after")
	want = append(want, fmt.Sprintf("%d:after", seq))
	poll.Within(t, 10*time.Second, "the gap to be filled", func() bool {
		applied, _ := edge.Applied(key)
		return applied >= seq
	})
	first := rtm.Position{Epoch: edge.Epoch(), Offset: 1}
	if got := held(t, st, key, first); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the store holds %v, want %v in order", got, want)
	}
}

func TestInterestFeedAcksOwnPublishOnceStored(t *testing.T) {
	n := node(t, "")
	edge, st := open(t, n, &Options{Interest: true})
	const key, quiet = "app\x00own", "app\x00unfollowed"
	followFor(t, edge, key)
	for k := range 20 {
		seq := publish(t, edge, key, fmt.Sprint(k))
		// Acknowledged: the store holds it at once.
		if p, ok := st.Peek(key); !ok || p.Offset != seq+1 {
			t.Fatalf("publish %d acknowledged at %d, the store's next is %v (%v)", k, seq, p, ok)
		}
	}
	// A channel nobody follows is acknowledged at JetStream's answer.
	publish(t, edge, quiet, "x")
	if st.Has(quiet) {
		t.Fatal("an unfollowed channel is in the store")
	}
}

func TestInterestFeedAppliesPurge(t *testing.T) {
	pub, edge, st := interestPair(t)
	const key = "app\x00purged"
	followFor(t, edge, key)
	var last uint64
	for k := range 3 {
		last = publish(t, pub, key, fmt.Sprint(k))
	}
	done := make(chan error, 1)
	pub.Purge(context.Background(), key, last, "", func(_ uint64, err error) { done <- err })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	next := publish(t, pub, key, "next")
	poll.Within(t, 10*time.Second, "the purge and the next message", func() bool {
		applied, _ := edge.Applied(key)
		return applied >= next
	})
	if got := held(t, st, key, rtm.Position{Epoch: edge.Epoch(), Offset: next}); fmt.Sprint(got) != fmt.Sprint([]string{fmt.Sprintf("%d:next", next)}) {
		t.Fatalf("after the purge the store holds %v", got)
	}
	if _, err := st.Subscribe(key, store.Start{Position: &rtm.Position{Epoch: edge.Epoch(), Offset: last}}); !errors.Is(err, store.ErrExpired) {
		f := edge.interest.fol[key]
		t.Fatalf("a purged position: %v, want expired (%v; applied %d purged %d)", err, held(t, st, key, rtm.Position{Epoch: edge.Epoch(), Offset: 1}), f.applied, f.purged)
	}
}

func TestInterestFollowEndsAfterLastRelease(t *testing.T) {
	pub, edge, st := interestPair(t)
	const key = "app\x00brief"
	ctx := context.Background()
	r1, err := edge.Follow(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := edge.Follow(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	publish(t, pub, key, "one")
	r1()
	r1() // twice: counted once
	if edge.Following() != 1 {
		t.Fatal("the follow ended while one interest remained")
	}
	r2()
	poll.Within(t, 3*followLinger, "the follow to end", func() bool { return edge.Following() == 0 })
	poll.Within(t, 10*time.Second, "the store to drop the channel", func() bool { return !st.Has(key) })
}

// A switch armed on one edge is announced to an edge fed by interest
// that does not follow its channel, so that edge can fire it if the
// arming edge goes.
func TestInterestAnnouncesSwitchesToEveryEdge(t *testing.T) {
	pub, edge, _ := interestPair(t)
	got := make(chan string, 4)
	edge.OnSwitch(func(key string, offset uint64, _ time.Time, ttl int64, message []byte, replayed bool) {
		got <- fmt.Sprintf("%q %d %d %s %v", key, offset, ttl, message, replayed)
	})
	const key = "app\x00armed"
	seq, err := answerOf(t, "arm", func(done func(uint64, error)) {
		pub.PublishArming(context.Background(), key, []byte(`"alive"`), "", 30, []byte(`"dead"`), done)
	})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%q %d 30 \"dead\" false", key, seq)
	select {
	case g := <-got:
		if g != want {
			t.Fatalf("announced %s, want %s", g, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no switch announced to the edge that does not follow the channel")
	}
}

// A message lost with nothing after it to show the gap (the channel's
// last) is found by the periodic comparison with the stream.
func TestInterestRefillFindsALostLastMessage(t *testing.T) {
	pub, edge, st := interestPair(t)
	const key = "app\x00quiet"
	followCut(t, edge, key)
	var want []string
	var last uint64
	for k := range 2 {
		last = publish(t, pub, key, fmt.Sprint("lost", k))
		want = append(want, fmt.Sprintf("%d:lost%d", last, k))
	}
	if applied, _ := edge.Applied(key); applied >= last {
		t.Fatalf("applied %d with the feed cut: the test lost nothing", applied)
	}
	edge.interest.refillAll()
	poll.Within(t, 10*time.Second, "the refill to read the lost messages", func() bool {
		applied, _ := edge.Applied(key)
		return applied >= last
	})
	if got := held(t, st, key, rtm.Position{Epoch: edge.Epoch(), Offset: 1}); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the store holds %v, want %v", got, want)
	}
}

package journal

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store"
	"github.com/sluicehq/sluice/internal/poll"
	"github.com/sluicehq/sluice/shared/rtm"
)

// An edge's feed can lag the log so far that a channel's messages are
// purged from the stream before it reads them: the purge marker it then
// applies must still put its subscribers that had not read them out of
// sync (they would skip them silently), and expire their positions. Here
// the lagging edge's feed starts after the purge, with a subscriber
// waiting on the channel from before.
func TestPurgeUnreadByTheFeed(t *testing.T) {
	n := node(t, "")
	j, _ := open(t, n, nil)
	const key = "app\x00h"
	s1 := publish(t, j, key, "a")
	if _, err := purge(t, j, key, s1); err != nil {
		t.Fatal(err)
	}

	nc, err := n.Connect(t.Name() + "-lagging")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lag, err := Open(ctx, nc, &Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		nc.Close()
		t.Fatal(err)
	}
	st := store.New(&store.Options{Epoch: lag.Epoch()})
	t.Cleanup(func() {
		lag.Close()
		nc.Close()
		st.Close()
	})
	cur, err := st.Subscribe(key, store.Start{})
	if err != nil {
		t.Fatal(err)
	}
	defer cur.Close()
	if cur.Position().Offset > s1 {
		t.Fatalf("the subscriber starts at %v, after the message at %d", cur.Position(), s1)
	}
	woken := make(wakeChan, 1)
	if !cur.Wait(woken) {
		t.Fatal("a subscriber with nothing to read did not wait")
	}
	if err := lag.Start(ctx, st); err != nil {
		t.Fatal(err)
	}
	select {
	case <-woken:
	case <-ctx.Done():
		t.Fatal("the purge did not wake the subscriber that missed its message")
	}
	if _, err := cur.Read(nil, 0); !errors.Is(err, store.ErrOutOfSync) {
		t.Fatalf("the subscriber after the purge: %v, want out of sync", err)
	}
	poll.WithinNil(t, 30*time.Second, "the lagging feed to catch up", lag.Ready)
	if _, _, err := st.Read(key, &rtm.Position{Epoch: lag.Epoch(), Offset: s1}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("a read of the purged %d on the lagging edge: %v, want expired", s1, err)
	}
}

// wakeChan wakes by a non-blocking send.
type wakeChan chan struct{}

func (w wakeChan) Wake() {
	select {
	case w <- struct{}{}:
	default:
	}
}

// Between a purge's marker and its purge of the stream, the stream still
// names the purged message as the channel's newest: a compare-and-set
// expecting it is stored then, though the channel was purged before it.
// The purge answers a mismatch, and the next one drops it too: a write
// that followed the purged message does not outlive the purge.
func TestPurgeDropsAWriteOnThePurgedNewest(t *testing.T) {
	j, st := open(t, node(t, ""), nil)
	const key = "app\x00kv"
	s1 := publish(t, j, key, "a")
	var cas uint64
	j.purgeMarked = func() {
		j.purgeMarked = nil
		var err error
		if cas, err = publishExpect(t, j, key, "b", "", "", s1); err != nil {
			t.Errorf("a write expecting %d, before the stream's purge: %v", s1, err)
		}
	}
	_, err := purge(t, j, key, s1)
	var me *MismatchError
	if !errors.As(err, &me) || me.Last != cas {
		t.Fatalf("purge through %d with a write on it at %d after the marker: %v, want a mismatch at %d", s1, cas, err, cas)
	}
	if _, err := purge(t, j, key, cas); err != nil {
		t.Fatalf("purge again through %d: %v", cas, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if f, _, found, err := j.Latest(ctx, key, 0); err != nil || found {
		t.Fatalf("the stream after the purges: %+v %v %v, want nothing", f, found, err)
	}
	if _, found, _ := st.Read(key, nil); found {
		t.Fatal("the store holds a message after the purges")
	}
	if n, err := j.PurgedThrough(ctx, key); err != nil || n != cas {
		t.Fatalf("PurgedThrough = %d, %v; want %d", n, err, cas)
	}
}

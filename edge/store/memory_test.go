package store

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/edge/store/storetest"
)

// TestEvictedChannelIsForgotten: a channel whose only block the store
// limit evicts is forgotten at once when no cursor is open on it (its
// positions are then expired, and its next message starts a new epoch);
// one with a cursor stays, releases the block, goes on receiving, and is
// forgotten when its cursor closes, once drained again.
func TestEvictedChannelIsForgotten(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb,
		StoreBytes: 2*blockCost(bb) + 3*channelCost("a")})
	pa := mustAppend(t, s, "a", payload(0, 4))
	mustAppend(t, s, "b", payload(0, 4))
	c := mustSubscribe(t, s, "b", Start{}) // at b's end
	evicted := s.lookup("b").tail

	mustAppend(t, s, "c", payload(0, 4)) // evicts a's block: a goes
	if st := s.Stats(); st.Channels != 2 || st.Blocks != 2 || st.Memory != 2*blockCost(bb)+2*channelCost("a") {
		t.Fatalf("after the first eviction: %+v, want channels b and c with a block each", st)
	}
	if _, ok := s.Peek("a"); ok {
		t.Fatal("the drained channel a is still live")
	}
	if _, _, err := s.Read("a", &pa); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read at the forgotten channel's position: %v, want ErrExpired", err)
	}
	if p := mustAppend(t, s, "a", payload(1, 4)); p.Epoch == pa.Epoch || p.Offset != 1 {
		t.Fatalf("append to the forgotten channel at %v, want a new epoch at offset 1", p)
	}
	// That evicted b's block: b stays for its cursor, without the block.
	b := s.lookup("b")
	if b == nil {
		t.Fatal("channel b, with a cursor open, was forgotten")
	}
	b.mu.Lock()
	tail := b.tail
	b.mu.Unlock()
	if tail == evicted || len(tail.buf) != 0 || len(b.q.Load().blocks) != 0 {
		t.Fatal("channel b still holds its evicted block")
	}
	mustAppend(t, s, "b", payload(1, 4))
	if got := offsets(t, c); !equalOffsets(got, []uint64{2}) {
		t.Fatalf("cursor at the evicted block's end read %v, want [2]", got)
	}

	// Drained again, then its cursor closes: that forgets it.
	mustAppend(t, s, "a", payload(2, 4))
	mustAppend(t, s, "a", payload(3, 4))
	mustAppend(t, s, "c", payload(1, 4))
	mustAppend(t, s, "c", payload(2, 4))
	if _, ok := s.Peek("b"); !ok || len(b.q.Load().blocks) != 0 {
		t.Fatal("b is not live and drained")
	}
	c.Close()
	if _, ok := s.Peek("b"); ok {
		t.Fatal("the drained channel b outlived its cursor")
	}
}

// TestExpiredTailIsReleased: when expiry deletes a channel's last block,
// the channel kept by a cursor holds no more of it, and the cursor reads
// on from there.
func TestExpiredTailIsReleased(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{Retention: noHistory(time.Second, -1)})
	mustAppend(t, s, "c", payload(0, 4))
	c := mustSubscribe(t, s, "c", Start{HistoryCount: 1})
	clk.Advance(2 * time.Second)
	s.Sweep()
	ch := s.lookup("c")
	ch.mu.Lock()
	held := len(ch.tail.buf)
	ch.mu.Unlock()
	if held != 0 || s.Stats().Memory != channelCost("c") {
		t.Fatalf("after expiry the channel holds a %d-byte tail; stats %+v", held, s.Stats())
	}
	if _, err := c.Read(nil, 0); !errors.Is(err, ErrOutOfSync) {
		t.Fatalf("cursor before the expired message: %v, want out of sync", err)
	}
	c.FastForward()
	mustAppend(t, s, "c", payload(1, 4))
	if got := offsets(t, c); !equalOffsets(got, []uint64{2}) {
		t.Fatalf("after fast-forward read %v, want [2]", got)
	}
}

// TestReplicaEvictionForgets: a replica fed by AppendAt evicts and forgets
// like a standalone store, and a channel it forgot takes the log's next
// messages again in the same epoch.
func TestReplicaEvictionForgets(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	s, clk := newTestStore(t, &Options{Epoch: 7, StoreBytes: limit})
	s.SetApplied(0, 10)
	off := uint64(10)
	for i := range 2000 {
		off++
		if _, err := s.AppendAt("app\x00c"+strconv.Itoa(i), off, clk.Now(), payload(i, 100)); err != nil {
			t.Fatalf("AppendAt %d: %v", off, err)
		}
		s.SetApplied(0, off)
	}
	if st := s.Stats(); st.Memory > limit || st.Channels > 100 {
		t.Fatalf("replica after 2000 channels: %+v, limit %d", st, limit)
	}
	if _, ok := s.Peek("app\x00c0"); ok {
		t.Fatal("the first channel was not forgotten")
	}
	off++
	p, err := s.AppendAt("app\x00c0", off, clk.Now(), payload(0, 100))
	if err != nil || p.Epoch != 7 || p.Offset != off {
		t.Fatalf("AppendAt to a forgotten channel = %v, %v, want 7:%d", p, err, off)
	}
}

// TestAppendWithinGroupLimit: AppendWithin creates no channel past its
// group's limit and stores nothing then; live channels, other groups and
// AppendAt are not refused; a forgotten channel frees its place.
func TestAppendWithinGroupLimit(t *testing.T) {
	t.Parallel()
	appOf := func(name string) string { g, _, _ := strings.Cut(name, "\x00"); return g }
	s, clk := newTestStore(t, &Options{Group: appOf, Retention: noHistory(time.Second, -1)})
	within := func(name string) error {
		_, err := s.Channel(name).AppendWithin(payload(0, 4), 3)
		return err
	}
	for _, name := range []string{"x\x00a", "x\x00b", "x\x00c", "x\x00a"} {
		if err := within(name); err != nil {
			t.Fatalf("AppendWithin(%q): %v", name, err)
		}
	}
	if err := within("x\x00d"); !errors.Is(err, ErrChannelLimit) {
		t.Fatalf("4th channel of x: %v, want ErrChannelLimit", err)
	}
	if _, ok := s.Peek("x\x00d"); ok || s.Channels("x") != 3 {
		t.Fatalf("refused channel created; x has %d channels", s.Channels("x"))
	}
	if err := within("y\x00d"); err != nil || s.Channels("y") != 1 {
		t.Fatalf("another group refused: %v", err)
	}
	if _, err := s.AppendAt("x\x00e", 100, clk.Now(), payload(0, 4)); err != nil || s.Channels("x") != 4 {
		t.Fatalf("AppendAt past the limit: %v (x has %d)", err, s.Channels("x"))
	}
	clk.Advance(2 * time.Second) // all expire and are forgotten
	s.Sweep()
	if s.Channels("x") != 0 {
		t.Fatalf("x has %d channels after they were forgotten", s.Channels("x"))
	}
	if err := within("x\x00d"); err != nil {
		t.Fatalf("after forgetting: %v", err)
	}
}

// TestAppendWithinRace: creators racing over distinct channels of one
// group never take it past the limit.
func TestAppendWithinRace(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	const limit, workers = 50, 8
	var wg sync.WaitGroup
	errc := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			refused := 0
			for i := range 20 {
				_, err := s.Channel(strconv.Itoa(w*100+i)).AppendWithin(payload(i, 4), limit)
				switch {
				case errors.Is(err, ErrChannelLimit):
					refused++
				case err != nil:
					errc <- err
					return
				}
			}
			errc <- nil
		})
	}
	wg.Wait()
	checkErrs(t, errc)
	if n := s.Channels(""); n != limit {
		t.Fatalf("%d channels created, want exactly the limit %d", n, limit)
	}
}

// TestMemoryEstimates: the fixed costs the store counts per channel and
// per block are at least what they take on the heap, and not far above.
// Not parallel: it measures the process's heap.
func TestMemoryEstimates(t *testing.T) {
	const n = 50_000
	s, _ := newTestStore(t, nil)
	names := make([]string, n)
	for i := range names {
		names[i] = "app\x00channel-" + strconv.Itoa(i)
	}
	base := storetest.LiveHeap()
	for _, name := range names {
		s.Next(name) // a channel without blocks
	}
	withChannels := storetest.LiveHeap()
	for _, name := range names {
		mustAppend(t, s, name, payload(0, 4)) // and with one block each
	}
	withBlocks := storetest.LiveHeap()
	st := s.Stats()
	perChannel := (withChannels - base) / n
	perBlock := (withBlocks - withChannels - st.Bytes) / n
	nameLen := int64(len(names[n/2]))
	t.Logf("measured: %d bytes per channel (name %d), %d per block beyond its capacity; counted %d and %d",
		perChannel, nameLen, perBlock, channelOverhead+nameLen, blockOverhead)
	// A channel's first block replaces its anchor, which the channel
	// estimate holds: the two together are what a channel of one block
	// costs.
	if got, counted := perChannel+perBlock, channelOverhead+nameLen+blockOverhead; got > counted || 2*got < counted {
		t.Errorf("a channel with one block takes %d bytes, counted %d", got, counted)
	}
	if perChannel > channelOverhead+nameLen || 2*perChannel < channelOverhead+nameLen {
		t.Errorf("a channel takes %d bytes, counted %d", perChannel, channelOverhead+nameLen)
	}
}

// TestStaleSnapshotPastAnAnchor: a reader holding a snapshot from before
// the channel's tail was deleted follows the links from it to the anchor
// that replaced the tail, and past it, without taking the anchor for a
// block of frames.
func TestStaleSnapshotPastAnAnchor(t *testing.T) {
	t.Parallel()
	s, clk := newTestStore(t, &Options{Retention: noHistory(time.Second, -1)})
	mustAppend(t, s, "c", payload(0, 4))
	c := mustSubscribe(t, s, "c", Start{}) // keeps the channel through expiry
	ch := s.lookup("c")
	stale := ch.q.Load()
	clk.Advance(2 * time.Second)
	s.Sweep() // deletes the only block: an anchor follows it
	for _, tt := range []struct {
		name string
		want uint64
	}{
		{"up to the anchor", 1},
		{"past the anchor", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == 2 {
				mustAppend(t, s, "c", payload(1, 4))
			}
			if f, ok, err := stale.newest(); err != nil || !ok || f.Offset != tt.want {
				t.Fatalf("newest from the stale snapshot = %d, %v, %v, want %d", f.Offset, ok, err, tt.want)
			}
			if f, ok := stale.frameAt(tt.want); !ok || f.Offset != tt.want {
				t.Fatalf("frameAt(%d) from the stale snapshot = %d, %v", tt.want, f.Offset, ok)
			}
		})
	}
	c.Close()
}

package store

import (
	"errors"
	"testing"
)

func TestEvictChannelLimit(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb, ChannelBytes: int64(3 * bb)})
	c := mustSubscribe(t, s, "c", Start{})
	other := mustSubscribe(t, s, "other", Start{})
	for i := range 6 {
		mustAppend(t, s, "c", payload(i, 4))
	}
	mustAppend(t, s, "other", payload(0, 4))
	if st := s.Stats(); st.Blocks != 4 || st.EvictedBlocks != 0 {
		t.Fatalf("at the limit: %+v", st)
	}
	mustAppend(t, s, "c", payload(6, 4)) // a 4th block for c: its oldest goes
	e := s.Next("c").Epoch
	if st := s.Stats(); st.Blocks != 4 || st.EvictedBlocks != 1 || st.Bytes != int64(4*bb) {
		t.Fatalf("past the limit: %+v, want 4 blocks, 1 evicted", st)
	}
	if _, _, err := s.Read("c", pos(e, 2)); !errors.Is(err, ErrExpired) {
		t.Fatalf("Read in the evicted block: %v", err)
	}
	if f, ok, err := s.Read("c", pos(e, 3)); err != nil || !ok || f.Offset != 3 {
		t.Fatalf("Read(3) = %v, %v, %v", f.Offset, ok, err)
	}
	_, err := c.Read(nil, 0)
	if oos := oosError(t, err); oos.Missed != 2 || oos.Head.Offset != 3 {
		t.Fatalf("out of sync %+v, want 2 missed, head 3", *oos)
	}
	if got := offsets(t, other); !equalOffsets(got, []uint64{1}) {
		t.Fatalf("other channel read %v", got)
	}
}

func TestEvictStoreLimitOldestFirst(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	// Room for two channels and four blocks, as the store counts them.
	limit := 4*blockCost(bb) + 2*channelCost("a")
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb, StoreBytes: limit})
	// Blocks in creation order: a1 b1 a2 b2, then a3 evicts a1, b3 evicts b1.
	for _, ch := range []string{"a", "b", "a", "b"} {
		mustAppend(t, s, ch, payload(0, 4))
		mustAppend(t, s, ch, payload(1, 4))
	}
	if st := s.Stats(); st.Blocks != 4 || st.EvictedBlocks != 0 {
		t.Fatalf("at the limit: %+v", st)
	}
	ea, eb := s.Next("a").Epoch, s.Next("b").Epoch
	mustAppend(t, s, "a", payload(2, 4))
	if _, _, err := s.Read("a", pos(ea, 1)); !errors.Is(err, ErrExpired) {
		t.Fatalf("a's oldest block kept: %v", err)
	}
	if _, ok, err := s.Read("b", pos(eb, 1)); err != nil || !ok {
		t.Fatalf("b's oldest block evicted before a's newer one: %v", err)
	}
	mustAppend(t, s, "b", payload(2, 4))
	if _, _, err := s.Read("b", pos(eb, 1)); !errors.Is(err, ErrExpired) {
		t.Fatalf("b's oldest block kept: %v", err)
	}
	if st := s.Stats(); st.Blocks != 4 || st.EvictedBlocks != 2 || st.Bytes != int64(4*bb) || st.Memory != limit {
		t.Fatalf("after evictions: %+v, want 4 blocks, 2 evicted, memory %d", st, limit)
	}
}

// TestEvictNeverTheBlockBeingWritten: with room for one block only, each
// new block evicts every older one but itself, and the newest message
// stays readable.
func TestEvictNeverTheBlockBeingWritten(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb, StoreBytes: int64(bb)})
	for i := range 20 {
		ch := []string{"a", "b", "c"}[i%3]
		p := mustAppend(t, s, ch, payload(i, 4))
		if f, ok, err := s.Read(ch, &p); err != nil || !ok || f.Offset != p.Offset {
			t.Fatalf("append %d: just-written message not readable: %v, %v", i, ok, err)
		}
		if st := s.Stats(); st.Blocks != 1 {
			t.Fatalf("append %d: %d blocks, want 1", i, st.Blocks)
		}
	}
}

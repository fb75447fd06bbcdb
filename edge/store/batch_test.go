package store

import (
	"errors"
	"testing"
	"time"
)

// batchOffsets takes batches from c until an empty one and returns each
// one's offsets, checking Len, First and Last against its frames.
func batchOffsets(t *testing.T, c *Cursor) [][]uint64 {
	t.Helper()
	var out [][]uint64
	for {
		bt, err := c.ReadBatch()
		if err != nil {
			t.Fatalf("ReadBatch: %v", err)
		}
		if bt.Len() == 0 {
			return out
		}
		var offs []uint64
		for f := range bt.ForEach {
			offs = append(offs, f.Offset)
		}
		if len(offs) != bt.Len() || bt.First() != offs[0] || bt.Last() != offs[len(offs)-1] {
			t.Fatalf("batch Len %d, %d..%d; frames %v", bt.Len(), bt.First(), bt.Last(), offs)
		}
		out = append(out, offs)
	}
}

func TestReadBatch(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 3)
	tests := []struct {
		name string
		// run appends to "c" and returns a cursor on it, and where the
		// cursor's Position should be after the batches.
		run  func(t *testing.T, s *Store) (*Cursor, uint64)
		want [][]uint64
	}{
		{"one per block", func(t *testing.T, s *Store) (*Cursor, uint64) {
			c := mustSubscribe(t, s, "c", Start{})
			for i := range 7 {
				mustAppend(t, s, "c", payload(i, 4))
			}
			return c, 8
		}, [][]uint64{{1, 2, 3}, {4, 5, 6}, {7}}},
		{"counts frames, not offsets", func(t *testing.T, s *Store) (*Cursor, uint64) {
			c := mustSubscribe(t, s, "c", Start{})
			for _, o := range []uint64{10, 20, 25, 1000} {
				if _, err := s.AppendAt("c", o, time.Unix(0, 0), payload(int(o), 4)); err != nil {
					t.Fatal(err)
				}
			}
			return c, 1001
		}, [][]uint64{{10, 20, 25}, {1000}}},
		{"start at the next offset", func(t *testing.T, s *Store) (*Cursor, uint64) {
			for i := range 4 {
				mustAppend(t, s, "c", payload(i, 4))
			}
			c := mustSubscribe(t, s, "c", Start{Position: pos(s.Next("c").Epoch, 5)})
			for i := 4; i < 7; i++ {
				mustAppend(t, s, "c", payload(i, 4))
			}
			return c, 8
		}, [][]uint64{{5, 6}, {7}}},
		{"start inside a block", func(t *testing.T, s *Store) (*Cursor, uint64) {
			for i := range 5 {
				mustAppend(t, s, "c", payload(i, 4))
			}
			return mustSubscribe(t, s, "c", Start{HistoryCount: 4}), 6
		}, [][]uint64{{2, 3}, {4, 5}}},
		{"after a partial Read", func(t *testing.T, s *Store) (*Cursor, uint64) {
			c := mustSubscribe(t, s, "c", Start{})
			for i := range 5 {
				mustAppend(t, s, "c", payload(i, 4))
			}
			if fs, err := c.Read(nil, 4); err != nil || len(fs) != 1 {
				t.Fatalf("Read = %d frames, %v", len(fs), err)
			}
			return c, 6
		}, [][]uint64{{2, 3}, {4, 5}}},
		{"nothing ready", func(t *testing.T, s *Store) (*Cursor, uint64) {
			mustAppend(t, s, "c", payload(0, 4))
			return mustSubscribe(t, s, "c", Start{}), 2
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb})
			c, next := tt.run(t, s)
			got := batchOffsets(t, c)
			if len(got) != len(tt.want) {
				t.Fatalf("batches %v, want %v", got, tt.want)
			}
			for i := range got {
				if !equalOffsets(got[i], tt.want[i]) {
					t.Fatalf("batches %v, want %v", got, tt.want)
				}
			}
			if p := c.Position().Offset; p != next {
				t.Fatalf("cursor at %d, want %d", p, next)
			}
		})
	}
}

// TestReadBatchTail: batches of the tail block grow as it is written, and
// Next and ForEach give the same frames.
func TestReadBatchTail(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, nil)
	c := mustSubscribe(t, s, "c", Start{})
	for round := range 3 {
		for i := range round + 1 {
			mustAppend(t, s, "c", payload(i, 10*i))
		}
		bt, err := c.ReadBatch()
		if err != nil || bt.Len() != round+1 {
			t.Fatalf("round %d: batch of %d, %v", round, bt.Len(), err)
		}
		size, n := 0, 0
		var f Frame
		for bt.Next(&f) {
			if string(f.Data) != string(payload(n, 10*n)) {
				t.Fatalf("round %d frame %d: wrong data", round, n)
			}
			size += len(f.Data)
			n++
		}
		if n != bt.Len() || size != bt.Size() {
			t.Fatalf("Next gave %d frames, %d bytes; batch %d, %d", n, size, bt.Len(), bt.Size())
		}
		stopped := 0
		for range bt.ForEach {
			stopped++
			break
		}
		if stopped != 1 {
			t.Fatalf("ForEach went on after yield returned false")
		}
	}
}

// TestReadBatchOutOfSync: ReadBatch reports a loss exactly as Read does,
// until FastForward.
func TestReadBatchOutOfSync(t *testing.T) {
	t.Parallel()
	bb := frameOf(4, 2)
	s, _ := newTestStore(t, &Options{BlockBytes: bb, FirstBlockBytes: bb, ChannelBytes: int64(2 * bb)})
	byRead := mustSubscribe(t, s, "c", Start{})
	byBatch := mustSubscribe(t, s, "c", Start{})
	for i := range 7 { // blocks 1-2, 3-4, 5-6, 7: the first two evicted
		mustAppend(t, s, "c", payload(i, 4))
	}
	_, rerr := byRead.Read(nil, 0)
	want := oosError(t, rerr)
	for range 2 {
		_, err := byBatch.ReadBatch()
		if got := oosError(t, err); *got != *want || got.Missed != 4 {
			t.Fatalf("ReadBatch: %+v; Read: %+v, want 4 missed", *got, *want)
		}
	}
	if st := s.Stats(); st.OutOfSync != 2 {
		t.Fatalf("out of sync counted %d times, want once per cursor", st.OutOfSync)
	}
	if missed, p := byBatch.FastForward(); missed != 4 || p.Offset != 5 {
		t.Fatalf("FastForward = %d, %v", missed, p)
	}
	if got := batchOffsets(t, byBatch); len(got) != 2 || !equalOffsets(got[0], seq(5, 6)) || !equalOffsets(got[1], seq(7, 7)) {
		t.Fatalf("after FastForward: %v", got)
	}
	byBatch.Close()
	if _, err := byBatch.ReadBatch(); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadBatch on a closed cursor: %v", err)
	}
}

// TestReadBatchFrameCap: a block holds at most maxBlockFrames frames, so
// its count fits beside its boundary. Not parallel: it lowers the cap.
func TestReadBatchFrameCap(t *testing.T) {
	old := maxBlockFrames
	maxBlockFrames = 3
	defer func() { maxBlockFrames = old }()
	s, _ := newTestStore(t, nil)
	c := mustSubscribe(t, s, "c", Start{})
	for i := range 7 {
		mustAppend(t, s, "c", payload(i, 4))
	}
	got := batchOffsets(t, c)
	if len(got) != 3 || len(got[0]) != 3 || len(got[1]) != 3 || !equalOffsets(got[2], seq(7, 7)) {
		t.Fatalf("batches %v, want 3 blocks of 3, 3 and 1", got)
	}
	if st := s.Stats(); st.Blocks != 3 {
		t.Fatalf("%d blocks, want 3", st.Blocks)
	}
}

// TestReadBatchDoesNotAllocate: handle append, wake, wait and batch read
// in steady state.
func TestReadBatchDoesNotAllocate(t *testing.T) {
	s, _ := newTestStore(t, &Options{FirstBlockBytes: 64 << 10})
	h := s.Channel("c")
	c := mustSubscribe(t, s, "c", Start{})
	w := newWaker()
	data := []byte("hello")
	if _, err := h.Append(data); err != nil {
		t.Fatal(err)
	}
	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	allocs := testing.AllocsPerRun(100, func() {
		if bt, err := c.ReadBatch(); err != nil || bt.Len() != 1 {
			t.Fatalf("batch %d, %v", bt.Len(), err)
		}
		if !c.Wait(w) {
			t.Fatal("not armed")
		}
		if _, err := h.Append(data); err != nil {
			t.Fatalf("append: %v", err)
		}
		awaitWake(t, w, timeout)
	})
	if allocs != 0 {
		t.Fatalf("%v allocs per append+wake+wait+batch, want 0", allocs)
	}
}
